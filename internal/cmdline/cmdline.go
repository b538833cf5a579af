// Package cmdline holds what whestbake's two commands (whestbake and
// whestbake-worker) share on the command line: usage errors and the exit codes
// they decide, cobra wired so that its own usage problems are usage errors at
// their source, and the config file's flag and environment variable.
package cmdline

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Exit codes of both commands.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Error marks an error in how a command was called.
type Error struct{ err error }

func (e Error) Error() string { return e.err.Error() }
func (e Error) Unwrap() error { return e.err }

// Usagef is a usage error with a formatted message.
func Usagef(format string, a ...any) error { return Error{fmt.Errorf(format, a...)} }

// Usage marks err as a usage error (nil stays nil).
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return Error{err}
}

// ExitCode is the process exit code for the error a command returned.
func ExitCode(err error) int {
	var ue Error
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ue):
		return ExitUsage
	}
	return ExitError
}

// The YAML config file: one flag name and one variable for every command that
// reads a config file. --config is not it: whestbench and `dataset bake` use
// that name for the dataset's HF config name.
const (
	FileFlag = "config-file"
	FileEnv  = "WHESTBAKE_CONFIG_FILE"
)

// ConfigFile is the config file fs names: --config-file, else
// $WHESTBAKE_CONFIG_FILE, else "" (none).
func ConfigFile(fs *pflag.FlagSet) string {
	if f := fs.Lookup(FileFlag); f != nil && f.Changed {
		return f.Value.String()
	}
	return os.Getenv(FileEnv)
}

// Strict makes every usage problem cobra finds in root's tree a usage Error:
// flag errors (unknown flags, bad values, missing values), argument-count
// errors of the commands' Args, and unknown subcommands (also before --help).
// A command with subcommands takes no arguments of its own, and shows its help
// when called without a subcommand unless it has its own Run. Call it once the
// tree is complete.
func Strict(root *cobra.Command) {
	root.SetFlagErrorFunc(flagError)
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch {
		case c.HasSubCommands():
			c.Args = unknownSubcommand
			// A group's own flags come before its verb: parsing stops at the
			// first argument, so `group nosuch --help` reaches Args (an
			// error) instead of cobra's help, which runs before Args.
			c.Flags().SetInterspersed(false)
			if !c.Runnable() {
				// cobra would show the help itself, but only after skipping
				// Args, so an unknown subcommand would exit 0.
				c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			}
		case c.Args != nil:
			args := c.Args
			c.Args = func(cmd *cobra.Command, a []string) error { return Usage(args(cmd, a)) }
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func flagError(cmd *cobra.Command, err error) error {
	var ne *pflag.NotExistError
	if errors.As(err, &ne) && ne.GetSpecifiedName() == "config" && cmd.Flags().Lookup(FileFlag) != nil {
		return Usagef("%s takes its config file as --%s FILE (or %s); --config is a dataset's HF config name, for `whestbake dataset bake`",
			cmd.CommandPath(), FileFlag, FileEnv)
	}
	return Usage(err)
}

// CheckHelpArgs refuses, before cobra runs, an unknown verb that cobra would
// answer with a parent's help and exit 0: one after a group's --help
// (`dataset --help nosuch`: cobra shows help before it checks arguments) and
// one in the help command's path (`help dataset nosuch`: cobra's help shows
// the deepest command it found). Every other unknown verb reaches the
// group's Args (Strict).
func CheckHelpArgs(root *cobra.Command, args []string) error {
	if len(args) > 0 && args[0] == "help" {
		args = args[1:]
	} else if !slices.Contains(args, "--help") && !slices.Contains(args, "-h") {
		return nil
	}
	cmd, rest, err := root.Find(args)
	if err != nil || !cmd.HasSubCommands() {
		return nil // cobra reports these itself
	}
	if verb := firstPositional(cmd, rest); verb != "" {
		return unknownSubcommand(cmd, []string{verb})
	}
	return nil
}

// firstPositional is the first of args that is neither a flag of cmd nor a
// flag's value ("" if none): what cobra would take for a verb of cmd.
func firstPositional(cmd *cobra.Command, args []string) string {
	flags := cmd.Flags()
	flags.AddFlagSet(cmd.InheritedFlags())
	for i := 0; i < len(args); i++ {
		a := args[i]
		var f *pflag.Flag
		switch {
		case a == "--":
			if i+1 < len(args) {
				return args[i+1]
			}
			return ""
		case strings.HasPrefix(a, "--"):
			if strings.Contains(a, "=") {
				continue
			}
			f = flags.Lookup(a[2:])
		case strings.HasPrefix(a, "-") && len(a) == 2:
			f = flags.ShorthandLookup(a[1:])
		case strings.HasPrefix(a, "-"):
			continue // -xVALUE: a shorthand with its value attached
		default:
			return a
		}
		if f != nil && f.NoOptDefVal == "" {
			i++ // the flag's value
		}
	}
	return ""
}

func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return Usagef("unknown command %q for %q: use one of %s", args[0], cmd.CommandPath(), strings.Join(names, ", "))
}
