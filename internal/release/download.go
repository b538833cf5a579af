// Package release takes a finished dataset out of S3: a release, or a
// bake's final dataset, downloaded into a new directory and checked file
// by file against its manifest before it is renamed into place. The Push
// activity writes releases; this is their reader's side.
package release

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/store"
)

// FieldOutput is DownloadInput.Output, as its messages name it through
// DownloadInput.Names.
const FieldOutput = "output"

// DownloadInput is a committed dataset directory in S3 and where it goes.
type DownloadInput struct {
	Store  store.Config
	Bucket string
	// Prefix is the directory's: a release's, or keys.Bake(id).Dataset().
	Prefix string
	// Output is the directory to create, which must not exist.
	Output string
	// Names is how the front end calls a field in the messages, as the CLI
	// calls one --output; nil keeps the fields' own names.
	Names func(field string) string
}

// DownloadOutput is what arrived.
type DownloadOutput struct {
	Files int
	Bytes int64
}

// Download fetches the directory at in.Prefix into in.Output, verifying
// every file against the manifest and the prepared tree against the
// parquet files. The files land in a directory beside in.Output, renamed
// into place once all check out: a failed download leaves nothing there.
func Download(ctx context.Context, in DownloadInput) (DownloadOutput, error) {
	output, bucket, prefix := in.Output, in.Bucket, in.Prefix
	if err := dataset.CheckOutputFree(output); err != nil {
		return DownloadOutput{}, err
	}
	st, err := store.Open(ctx, in.Store, bucket)
	if err != nil {
		return DownloadOutput{}, err
	}
	m, _, err := manifest.Read(ctx, st, prefix)
	if errors.Is(err, store.ErrNotFound) {
		return DownloadOutput{}, fmt.Errorf("s3://%s/%s has no manifest.json: "+
			"it is not a release, or the bake has not finished (check `whestbake status ID`)",
			bucket, prefix)
	}
	if err == nil && len(m.Files) == 0 {
		err = fmt.Errorf("%w: %s lists no files", manifest.ErrMalformed, keys.Manifest(prefix))
	}
	if err != nil {
		return DownloadOutput{}, fmt.Errorf("s3://%s: %w", bucket, err)
	}
	abs, err := filepath.Abs(output)
	if err != nil {
		return DownloadOutput{}, err
	}
	tmp, err := in.stagingDir(abs)
	if err != nil {
		return DownloadOutput{}, err
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	if err := manifest.Fetch(ctx, st, prefix, m, tmp); err != nil {
		if errors.Is(err, manifest.ErrMismatch) || errors.Is(err, manifest.ErrUnsafePath) {
			return DownloadOutput{}, fmt.Errorf("s3://%s: %w; the copy in S3 is damaged, "+
				"nothing was written to %s", bucket, err, output)
		}
		return DownloadOutput{}, err
	}
	// The store writes private temp files and MkdirTemp makes a private
	// directory.
	out := DownloadOutput{Files: len(m.Files)}
	for _, f := range m.Files {
		out.Bytes += f.Size
		if err := os.Chmod(filepath.Join(tmp, filepath.FromSlash(f.Path)), 0o644); err != nil {
			return DownloadOutput{}, err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return DownloadOutput{}, err
	}
	// Every file matches the manifest; the dataset must also open whole and
	// its prepared tree match the parquet files, which whestbench's loader
	// would read it for.
	if err := dataset.CheckFetched(tmp, ""); err != nil {
		return DownloadOutput{}, fmt.Errorf("s3://%s/%s: %w; nothing was written to %s",
			bucket, prefix, err, output)
	}
	if err := os.Rename(tmp, abs); err != nil {
		return DownloadOutput{}, fmt.Errorf("moving the download into %s: %w", output, err)
	}
	return out, nil
}

// stagingDir makes the directory beside the output abs that the files
// land in, so that the rename into place cannot cross file systems.
func (in DownloadInput) stagingDir(abs string) (string, error) {
	name := FieldOutput
	if in.Names != nil {
		name = in.Names(FieldOutput)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", fmt.Errorf("cannot create the parent of %s: %w", name, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".download-*")
	if err != nil {
		return "", fmt.Errorf("cannot create a directory beside %s: %w", name, err)
	}
	return tmp, nil
}
