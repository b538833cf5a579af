// Package cli is the whestbake command line: cobra commands whose flags can
// also come from WHESTBAKE_* environment variables and a config file (viper).
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/whestbake/whestbake/internal/bake"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/settings"
)

// Version is the whestbake version.
const Version = bake.Version

// Execute runs the command line and returns the process exit code: 0 on
// success, 2 for a malformed command line, 1 for everything else. Ctrl-C stops
// a bake cleanly (nothing is written).
func Execute(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	err := cmdline.CheckHelpArgs(root, args)
	if err == nil {
		err = root.ExecuteContext(ctx)
	}
	if err != nil {
		fmt.Fprintf(stderr, "error: %v\n", err)
	}
	return cmdline.ExitCode(err)
}

// NewRoot builds the command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	v := viper.New()
	root := &cobra.Command{
		Use:           "whestbake",
		Short:         "Bake whestbench ground-truth datasets for random ReLU MLPs",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       Version,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return loadConfig(v, cmd)
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.PersistentFlags().String(cmdline.FileFlag, "", "YAML/JSON/TOML file of flag values (keys are flag names; the Temporal verbs read configs/example.yaml's keys instead); also "+cmdline.FileEnv)
	root.AddCommand(newDatasetCmd(), newBenchCmd(), newCalibrateCmd())
	root.AddCommand(newDevCmd())
	root.AddCommand(newBakeTemporalCmd(), newStatusCmd(), newWatchCmd(), newCancelCmd(), newListCmd(), newGCCmd())
	cmdline.Strict(root)
	return root
}

// loadConfig fills every flag the user did not set from WHESTBAKE_<FLAG> or the
// config file, in that order of precedence (flags > env > file > default).
func loadConfig(v *viper.Viper, cmd *cobra.Command) error {
	v.SetEnvPrefix("WHESTBAKE")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	if file := cmdline.ConfigFile(cmd.Flags()); file != "" {
		if ext := filepath.Ext(file); ext == ".yaml" || ext == ".yml" {
			// viper's YAML errors often name the line before the problem.
			data, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("--%s %s: %w", cmdline.FileFlag, file, err)
			}
			if err := settings.YAMLSyntax(data); err != nil {
				return fmt.Errorf("--%s %s: %w", cmdline.FileFlag, file, err)
			}
		}
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return fmt.Errorf("--%s %s: %v", cmdline.FileFlag, file, err)
		}
	}
	var firstErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == cmdline.FileFlag || f.Name == "help" || firstErr != nil {
			return
		}
		if !v.IsSet(f.Name) {
			return
		}
		val := v.Get(f.Name)
		var s string
		switch x := val.(type) {
		case []any:
			parts := make([]string, len(x))
			for i, p := range x {
				parts[i] = fmt.Sprint(p)
			}
			s = strings.Join(parts, ",")
		default:
			s = fmt.Sprint(x)
		}
		if err := f.Value.Set(s); err != nil {
			firstErr = fmt.Errorf("--%s from WHESTBAKE_%s or the config file: %v", f.Name, strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_")), err)
			return
		}
		f.Changed = true
	})
	return firstErr
}
