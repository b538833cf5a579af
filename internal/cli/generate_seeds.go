package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/mlps"
)

func newGenerateSeedsCmd() *cobra.Command {
	var n int64
	var seed int64
	var output string
	cmd := &cobra.Command{
		Use:   "generate-seeds --n-mlps N [--seed S] [--output FILE]",
		Short: "Write a JSON list of N distinct int63 input seeds (OS entropy unless --seed)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("n-mlps") {
				return cmdline.Usagef("--n-mlps is required")
			}
			var root *int64
			if cmd.Flags().Changed("seed") {
				root = &seed
			}
			list, err := mlps.DrawSeeds(int(n), root)
			if err != nil {
				return bakeapi.Rename(err, flagOf)
			}
			data := mlps.EncodeSeeds(list)
			if output == "" || output == "-" {
				_, err = cmd.OutOrStdout().Write(data)
				return err
			}
			return writeNewFile(output, data)
		},
	}
	cmd.Flags().Var(newCount(&n, 0, bakeapi.MaxNMLPs), "n-mlps", "number of seeds (MLPs)")
	cmd.Flags().Int64Var(&seed, "seed", 0,
		"derive the seeds deterministically from this root seed instead of OS entropy")
	cmd.Flags().StringVarP(&output, "output", "o", "",
		"write to FILE (must not exist) instead of stdout")
	return cmd
}

// writeNewFile creates path with data, refusing to overwrite, via a temp file and rename.
func writeNewFile(path string, data []byte) error {
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%s already exists: choose another --output or remove it", path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".whestbake-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Link(tmp.Name(), path) // fails if path appeared meanwhile
}
