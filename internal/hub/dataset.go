package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/readlimit"
)

// TokenEnv is the environment variable huggingface_hub also reads.
const TokenEnv = "HF_TOKEN"

// MaxTokenFileBytes caps a token file: a Hub token is tens of bytes.
const MaxTokenFileBytes = 64 << 10

// Token is the Hub token: the content of file when one is named, else
// $HF_TOKEN. It is never a flag or a config value, so it appears in no
// command line, config file or workflow input. The file is read under
// MaxTokenFileBytes, whatever it is: /dev/zero, a log.
func Token(file string, getenv func(string) string) (string, error) {
	if file != "" {
		data, err := readlimit.File(file, MaxTokenFileBytes)
		if err != nil {
			return "", fmt.Errorf("hub token file %s: %w", file, err)
		}
		tok := strings.TrimSpace(string(data))
		if tok == "" || strings.ContainsAny(tok, " \t\r\n") {
			return "", fmt.Errorf("hub token file %s must hold the token alone (one line): %w",
				file, ErrNoToken)
		}
		return tok, nil
	}
	if tok := strings.TrimSpace(getenv(TokenEnv)); tok != "" {
		return tok, nil
	}
	return "", fmt.Errorf("%w: set %s in the environment or name a file holding it "+
		"(--token-file, or release.hub.token-file for bakes); "+createWriteToken,
		ErrNoToken, TokenEnv)
}

// Dataset card and metadata of a dataset directory.
const (
	cardPath     = "README.md"
	metadataPath = "metadata.json"
)

// WithCard returns files with README.md re-rendered from metadata.json by
// the dataset card code for repository repo, as whestbench re-renders the
// card with the real repo id before it uploads. It keeps the report's
// section when the files hold the report, as dataset.WriteCard does for a
// directory. Everything else is pushed as it is: a push sends the whole
// directory.
func WithCard(ctx context.Context, files []File, repo string) ([]File, error) {
	i := index(files, metadataPath)
	if i < 0 {
		return nil, errors.New("hub: the directory has no metadata.json: " +
			"push a whestbake dataset directory (bake, merge or combine-splits output)")
	}
	r, err := files[i].Open(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("hub: reading metadata.json: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(r, dataset.MaxMetadataBytes+1))
	r.Close()
	if err != nil {
		return nil, fmt.Errorf("hub: reading metadata.json: %w", err)
	}
	if len(data) > dataset.MaxMetadataBytes {
		return nil, fmt.Errorf("hub: metadata.json is over %d bytes (dataset.MaxMetadataBytes): "+
			"it is not a dataset's", dataset.MaxMetadataBytes)
	}
	var md dataset.Object
	if err := json.Unmarshal(data, &md); err != nil {
		return nil, fmt.Errorf("hub: metadata.json is not valid JSON: %w", err)
	}
	opts := []dataset.CardOption{dataset.CardRepo(repo)}
	if hasAll(files, dataset.ReportPaths()) {
		opts = append(opts, dataset.CardReport())
	}
	card, err := dataset.RenderCard(&md, opts...)
	if err != nil {
		return nil, fmt.Errorf("hub: rendering the dataset card: %w", err)
	}
	out := append([]File(nil), files...)
	f := BytesFile(cardPath, []byte(card))
	if j := index(out, cardPath); j >= 0 {
		out[j] = f
	} else {
		out = append(out, f)
	}
	return out, nil
}

func hasAll(files []File, paths []string) bool {
	for _, p := range paths {
		if index(files, p) < 0 {
			return false
		}
	}
	return true
}

func index(files []File, path string) int {
	for i, f := range files {
		if f.Path == path {
			return i
		}
	}
	return -1
}

// DatasetFiles are the files of the dataset directory dir to push to repo,
// README.md re-rendered for it by WithCard, and the files of dir that are
// not the dataset's and stay behind: a token file, hidden files, notes.
// First dir is checked as `dataset inspect` checks it, every row and the
// prepared tree against them, and as datasets and whestbench load it:
// nothing is published that they would refuse.
func DatasetFiles(ctx context.Context, dir, repo string) (files []File, left []string, err error) {
	d, err := dataset.Open(dir, false)
	if err != nil {
		return nil, nil, err
	}
	if err := d.Info.CheckLoadable(); err != nil {
		return nil, nil, err
	}
	if err := d.ScanPrepared(nil); err != nil {
		return nil, nil, err
	}
	files, left, err = DirFiles(dir, dataset.IsDatasetFile)
	if err != nil {
		return nil, nil, err
	}
	files, err = WithCard(ctx, files, repo)
	return files, left, err
}
