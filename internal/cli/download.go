package cli

import (
	"errors"
	"fmt"
	"os"
	"path"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/bytesize"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/release"
	"github.com/whestbake/whestbake/internal/safetext"
	"github.com/whestbake/whestbake/internal/settings"
)

func newDownloadCmd() *cobra.Command {
	var output string
	var h hubFlags
	cmd := &cobra.Command{
		Use: "download SRC --output DIR",
		Short: "Download a dataset from the Hugging Face Hub (hf://owner/name[@rev]), " +
			"a release (s3://bucket/prefix/name/tag) or a finished bake (bake:ID), " +
			"checking every file",
		Long: `Downloads a dataset directory and checks every file. SRC is
  hf://OWNER/NAME[@REVISION]  a Hugging Face Hub dataset repository (whestbench's
                              download): every file of the revision, or with
                              --split S only data/S-*.parquet, metadata.json and
                              README.md; each LFS file checked against its sha256,
                              each other file against its git blob sha1. The token
                              (--token-file or HF_TOKEN) is needed for private
                              repositories only. Interrupted, it resumes where it
                              stopped when run again with the same --output.
  s3://BUCKET/PREFIX/NAME/TAG a release (what the bake's push printed), checked
                              against its manifest.json;
  bake:ID                     the final dataset of bake ID in s3.bucket.
For S3, the endpoint and credentials come from the config file's s3 section
(or WHESTBAKE_S3_*).
Files land in a directory beside --output, renamed into place once all check
out; an existing --output is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				return cmdline.Usagef("--output is required")
			}
			if repo, rev, ok, err := hub.ParseURI(args[0]); ok {
				if err != nil {
					return cmdline.Usage(err)
				}
				return hubDownload(cmd, h, repo, rev, output)
			}
			if h.split != "" {
				return cmdline.Usagef("--split selects files of a Hub repository (hf://…); " +
					"a release or bake is downloaded whole")
			}
			cfg, err := starterConfig(cmd, nil)
			if err != nil {
				return err
			}
			bucket, prefix, err := downloadSource(args[0], cfg)
			if err != nil {
				return err
			}
			if err := preflight.Store(cfg); err != nil {
				return err
			}
			res, err := release.Download(cmd.Context(), release.DownloadInput{
				Store:  cfg.StoreConfig(),
				Bucket: bucket,
				Prefix: prefix,
				Output: output,
				Names:  flagOf,
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "✓ Downloaded s3://%s/%s → %s: %d files, %s, "+
				"every sha256 matches the manifest\n",
				bucket, prefix, output, res.Files, bytesize.Format(res.Bytes))
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "directory to create (must not exist)")
	cmd.Flags().StringVar(&h.split, "split", "",
		"hf:// only: fetch only this split's parquet files, metadata.json and README.md")
	h.register(cmd)
	return cmd
}

// hubFlags are the Hub reader's flags, for download and info.
type hubFlags struct{ endpoint, tokenFile, split string }

func (h *hubFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&h.endpoint, "endpoint", hub.DefaultEndpoint, "hf:// only: Hub URL")
	cmd.Flags().StringVar(&h.tokenFile, "token-file", "",
		"hf:// only: file holding a Hub token, for private repositories "+
			"(default: $"+hub.TokenEnv+" if set, else none)")
	fromKey(cmd.Flags(), map[string]string{
		"endpoint":   "release.hub.endpoint",
		"token-file": "release.hub.token-file",
	})
}

// reader is a Hub client with the token of --token-file or HF_TOKEN, or
// none: public repositories need none.
func (h *hubFlags) reader() (*hub.Client, error) {
	token, err := hub.Token(h.tokenFile, os.Getenv)
	if errors.Is(err, hub.ErrNoToken) && h.tokenFile == "" {
		token, err = "", nil
	}
	if err != nil {
		return nil, err
	}
	c, err := hub.NewReader(h.endpoint, token)
	if err != nil {
		return nil, cmdline.Usage(fmt.Errorf("--endpoint: %w", err))
	}
	return c, nil
}

func hubDownload(cmd *cobra.Command, h hubFlags, repo, rev, output string) error {
	if h.split != "" {
		// A split of a dataset published before whestbake's split-name
		// rule may still hold a hyphen.
		if err := bakeapi.CheckWhestbenchName(h.split); err != nil {
			return cmdline.Usage(fmt.Errorf("--split: %w", err))
		}
	}
	c, err := h.reader()
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "Downloading hf://%s@%s → %s\n", repo, rev, output)
	var bar *progress
	var last int64
	start := time.Now()
	res, err := c.Download(cmd.Context(), hub.DownloadOptions{
		Repo:     repo,
		Revision: rev,
		Split:    h.split,
		Output:   output,
		// The listing is not trusted to hold every shard, and whestbench's
		// loader reads the prepared tree before the parquet files: the
		// dataset must open whole and its tree match its rows, or the
		// split's shards be complete.
		Check: func(dir string) error { return dataset.CheckFetched(dir, h.split) },
		Progress: func(p hub.DownloadProgress) {
			if bar == nil {
				bar = newProgress(cmd.ErrOrStderr(), "downloading", "B", p.Total)
			}
			bar.Add(p.Done - last)
			last = p.Done
		},
	})
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		if _, statErr := os.Stat(hub.StagingDir(output)); statErr == nil {
			err = fmt.Errorf("%w (what arrived is kept in %s: the same command resumes)",
				err, hub.StagingDir(output))
		}
		return err
	}
	resumed := ""
	if res.ResumedBytes > 0 {
		resumed = fmt.Sprintf(", %s of them from an interrupted run",
			bytesize.Format(res.ResumedBytes))
	}
	fmt.Fprintf(out, "✓ Downloaded hf://%s@%s (commit %s) in %s: %d files, %s%s; "+
		"every LFS file matches its sha256, every other its git blob sha1\n",
		repo, rev, safetext.Line(res.Commit), formatDuration(time.Since(start)),
		res.Files, bytesize.Format(res.Bytes), resumed)
	fmt.Fprintf(out, "Location: %s\n", output)
	return nil
}

// downloadSource resolves SRC to a bucket and a directory prefix.
func downloadSource(src string, cfg settings.Config) (bucket, prefix string, err error) {
	if id, ok := strings.CutPrefix(src, "bake:"); ok {
		// The ID names the prefix read: ".." or "a/b" would read
		// another bake's objects, or none.
		if err := settings.CheckBakeID(id); err != nil {
			return "", "", cmdline.Usagef("%q: write bake:ID, e.g. bake:demo-1; the bake ID %v",
				src, err)
		}
		return cfg.S3.Bucket, keys.Bake(id).Dataset(), nil
	}
	rest, ok := strings.CutPrefix(src, "s3://")
	if !ok {
		if err := hubRepoHint(src); err != nil {
			return "", "", err
		}
		return "", "", cmdline.Usagef("%q: SRC is hf://OWNER/NAME[@REVISION] "+
			"(the Hugging Face Hub), s3://BUCKET/PREFIX/NAME/TAG (a release) or bake:ID", src)
	}
	bucket, prefix, _ = strings.Cut(strings.Trim(rest, "/"), "/")
	if bucket == "" || prefix == "" || path.Clean(prefix) != prefix {
		return "", "", cmdline.Usagef("%q: SRC is s3://BUCKET/PREFIX/NAME/TAG, "+
			"with a path after the bucket", src)
	}
	return bucket, prefix, nil
}
