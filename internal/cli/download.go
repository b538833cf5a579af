package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/manifest"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/store"
)

func newDownloadCmd() *cobra.Command {
	var output string
	cmd := starterVerb(&cobra.Command{
		Use:   "download SRC --output DIR",
		Short: "Download a release (s3://bucket/prefix/name/tag) or a finished bake's dataset (bake:ID), checking every sha256",
		Long: `Downloads a dataset directory from S3 and checks every file against its
manifest.json. SRC is a release, s3://BUCKET/PREFIX/NAME/TAG (what the bake's
push printed), or bake:ID for the final dataset of bake ID in s3.bucket. The
endpoint and credentials come from --config-file / WHESTBAKE_S3_*. Files land in a
temporary directory beside --output, renamed into place once all check out;
an existing --output is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				return cmdline.Usagef("--output is required")
			}
			cfg, err := starterConfig(cmd, nil)
			if err != nil {
				return err
			}
			bucket, prefix, err := downloadSource(args[0], cfg)
			if err != nil {
				return err
			}
			m, err := download(cmd.Context(), cfg, bucket, prefix, output)
			if err != nil {
				return err
			}
			var size int64
			for _, f := range m.Files {
				size += f.Size
			}
			fmt.Fprintf(cmd.OutOrStdout(), "✓ Downloaded s3://%s/%s → %s: %d files, %s, every sha256 matches the manifest\n",
				bucket, prefix, output, len(m.Files), bake.FormatBytes(size))
			return nil
		},
	})
	cmd.Flags().StringVarP(&output, "output", "o", "", "directory to create (must not exist)")
	return cmd
}

// downloadSource resolves SRC to a bucket and a directory prefix.
func downloadSource(src string, cfg settings.Config) (bucket, prefix string, err error) {
	if id, ok := strings.CutPrefix(src, "bake:"); ok {
		// The ID names the prefix read: ".." or "a/b" would read
		// another bake's objects, or none.
		if err := settings.CheckBakeID(id); err != nil {
			return "", "", cmdline.Usagef("%q: write bake:ID, e.g. bake:demo-1; the bake ID %v", src, err)
		}
		return cfg.S3.Bucket, keys.Bake(id).Dataset(), nil
	}
	rest, ok := strings.CutPrefix(src, "s3://")
	if !ok {
		return "", "", cmdline.Usagef("%q: SRC is s3://BUCKET/PREFIX/NAME/TAG (a release) or bake:ID", src)
	}
	bucket, prefix, _ = strings.Cut(strings.Trim(rest, "/"), "/")
	if bucket == "" || prefix == "" || path.Clean(prefix) != prefix {
		return "", "", cmdline.Usagef("%q: SRC is s3://BUCKET/PREFIX/NAME/TAG, with a path after the bucket", src)
	}
	return bucket, prefix, nil
}

// download fetches the directory at prefix into output, verifying every file.
func download(ctx context.Context, cfg settings.Config, bucket, prefix, output string) (manifest.Manifest, error) {
	var m manifest.Manifest
	if err := cfg.ValidateStore(); err != nil {
		return m, err
	}
	if err := dataset.CheckOutputFree(output); err != nil {
		return m, err
	}
	st, err := store.Open(ctx, cfg.StoreConfig(), bucket)
	if err != nil {
		return m, err
	}
	m, _, err = manifest.Read(ctx, st, prefix)
	if errors.Is(err, store.ErrNotFound) {
		return m, fmt.Errorf("s3://%s/%s has no manifest.json: it is not a release, or the bake has not finished (check `whestbake status ID`)", bucket, prefix)
	}
	if err == nil && len(m.Files) == 0 {
		err = fmt.Errorf("%w: %s lists no files", manifest.ErrMalformed, keys.Manifest(prefix))
	}
	if err != nil {
		return m, fmt.Errorf("s3://%s: %w", bucket, err)
	}
	abs, err := filepath.Abs(output)
	if err != nil {
		return m, err
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return m, fmt.Errorf("cannot create the parent of --output: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".download-*")
	if err != nil {
		return m, fmt.Errorf("cannot create a directory beside --output: %w", err)
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	if err := manifest.Fetch(ctx, st, prefix, m, tmp); err != nil {
		if errors.Is(err, manifest.ErrMismatch) || errors.Is(err, manifest.ErrUnsafePath) {
			return m, fmt.Errorf("s3://%s: %w; the copy in S3 is damaged, nothing was written to %s", bucket, err, output)
		}
		return m, err
	}
	// The store writes private temp files and MkdirTemp makes a private directory.
	for _, f := range m.Files {
		if err := os.Chmod(filepath.Join(tmp, filepath.FromSlash(f.Path)), 0o644); err != nil {
			return m, err
		}
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return m, err
	}
	if err := os.Rename(tmp, abs); err != nil {
		return m, fmt.Errorf("moving the download into %s: %w", output, err)
	}
	return m, nil
}
