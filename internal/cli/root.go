// Package cli is the whestbake command line: cobra commands whose flags can
// also come from WHESTBAKE_* environment variables and a config file (viper).
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/whestbake/whestbake/internal/bake"
)

// Version is the whestbake version.
const Version = bake.Version

// usageError marks errors in how the command was called (exit code 2).
type usageError struct{ error }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// Execute runs the command line and returns the process exit code: 0 on
// success, 2 for a malformed command line, 1 for everything else. Ctrl-C stops
// a bake cleanly (nothing is written).
func Execute(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "error: %v\n", err)
	var ue usageError
	msg := err.Error()
	if errors.As(err, &ue) || strings.HasPrefix(msg, "unknown command") || strings.HasPrefix(msg, "accepts ") ||
		strings.HasPrefix(msg, "requires at least") || strings.HasPrefix(msg, "unknown flag") {
		return 2
	}
	return 1
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
	root.PersistentFlags().String("config-file", "", "YAML/JSON/TOML file of flag values (keys are flag names); also WHESTBAKE_CONFIG_FILE")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newDatasetCmd(), newBenchCmd(), newCalibrateCmd())
	root.AddCommand(newDevCmd())
	root.AddCommand(newBakeTemporalCmd(), newStatusCmd(), newWatchCmd(), newCancelCmd(), newListCmd())
	return root
}

// loadConfig fills every flag the user did not set from WHESTBAKE_<FLAG> or the
// config file, in that order of precedence (flags > env > file > default).
func loadConfig(v *viper.Viper, cmd *cobra.Command) error {
	v.SetEnvPrefix("WHESTBAKE")
	v.SetEnvKeyReplacer(strings.NewReplacer("-", "_"))
	v.AutomaticEnv()
	file, _ := cmd.Flags().GetString("config-file")
	if file == "" {
		file = os.Getenv("WHESTBAKE_CONFIG_FILE")
	}
	if file != "" {
		v.SetConfigFile(file)
		if err := v.ReadInConfig(); err != nil {
			return fmt.Errorf("--config-file %s: %v", file, err)
		}
	}
	var firstErr error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "config-file" || f.Name == "help" || firstErr != nil {
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
