// Package cli is the whestbake command line: cobra commands whose flags can
// also come from a config file and its WHESTBAKE_* environment variables.
// configkeys.go says which.
package cli

import (
	"context"
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/version"
)

// Version is the whestbake version.
const Version = version.Version

// Execute runs the command line and returns the process exit code: 0 on
// success, 2 for a malformed command line, 3 when watch or bake --wait
// gave up on a Temporal server that stopped answering while the bake runs
// on, 130 after Ctrl-C, which is 128 + the signal's number, 1 for
// everything else; exitCode has the exceptions. Ctrl-C stops a bake
// cleanly: nothing is written.
func Execute(args []string, stdout, stderr io.Writer) int {
	ctx, stop := cmdline.NotifyContext(context.Background())
	defer stop()
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	var cmd *cobra.Command
	err := cmdline.CheckHelpArgs(root, args)
	if err == nil {
		cmd, err = root.ExecuteContextC(ctx)
		err = cmdline.Interruption(ctx, err)
	}
	if err != nil {
		// Error texts quote datasets, files and servers, such as a split
		// name, the Hub's message, S3's and Temporal's: none prints a line
		// of its own.
		printError(stderr, err)
	}
	return exitCode(cmd, err)
}

// verdictAnnotation marks a verb whose exit 1 is a verdict: dataset
// compare's errDatasetsDiffer says the datasets differ.
const verdictAnnotation = "exit-1-is-a-verdict"

// exitCode is cmdline.ExitCode, except that a verb whose exit 1 is a
// verdict exits 2 on every failure, as diff(1) and cmp(1) do: a script that
// reads 1 as "different" is never told so by a failed download, an
// unreadable dataset or config file.
func exitCode(cmd *cobra.Command, err error) int {
	code := cmdline.ExitCode(err)
	if code == cmdline.ExitError &&
		cmd != nil &&
		cmd.Annotations[verdictAnnotation] != "" &&
		!errors.Is(err, errDatasetsDiffer) {
		return cmdline.ExitUsage
	}
	return code
}

// NewRoot builds the command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "whestbake",
		Short:         "Bake whestbench ground-truth datasets for random ReLU MLPs",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return loadConfig(cmd)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().String(cmdline.FileFlag, "",
		"YAML config file, sections as in configs/example.yaml; also "+cmdline.FileEnv+". "+
			"Flags win over WHESTBAKE_<SECTION>_<KEY>, which wins over the file")
	root.AddCommand(newDatasetCmd(), newBenchCmd(), newCalibrateCmd(), newConfigCmd())
	root.AddCommand(newDevCmd())
	root.AddCommand(newBakeCmd(), newStatusCmd(), newWatchCmd(), newCancelCmd(),
		newListCmd(), newGCCmd())
	cmdline.Strict(root, whestbenchFlags...)
	return root
}
