// Package cmdline holds what whestbake's two commands, whestbake and
// whestbake-worker, share on the command line: usage errors and the exit
// codes they decide, cobra wired so that its own usage problems are usage
// errors at their source, and the config file's flag and environment
// variable.
package cmdline

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/whestbake/whestbake/internal/safetext"
)

// Exit codes of both commands. A command stopped by a signal exits
// 128 + the signal's number, as Interrupted: ExitInterrupted after Ctrl-C.
// ExitDetached: a command that follows a bake stopped following it while
// the bake runs on, as Detached.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitDetached    = 3
	ExitInterrupted = 128 + int(syscall.SIGINT)
)

// Detached is the error of a command that gave up following a bake, as its
// Temporal server stopped answering, while the bake keeps running: neither
// a failed bake, exit 1, nor a stop asked for, exit 130.
type Detached struct{ Err error }

func (e Detached) Error() string { return e.Err.Error() }
func (e Detached) Unwrap() error { return e.Err }

// Error marks an error in how a command was called.
type Error struct{ err error }

func (e Error) Error() string { return e.err.Error() }
func (e Error) Unwrap() error { return e.err }

// Usagef is a usage error with a formatted message.
func Usagef(format string, a ...any) error { return Error{fmt.Errorf(format, a...)} }

// Usage marks err as a usage error; nil stays nil.
func Usage(err error) error {
	if err == nil {
		return nil
	}
	return Error{err}
}

// ExitCode is the process exit code for the error a command returned.
func ExitCode(err error) int {
	var ue Error
	var in Interrupted
	var de Detached
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &in):
		return 128 + int(in.Signal)
	case errors.As(err, &ue):
		return ExitUsage
	case errors.As(err, &de):
		return ExitDetached
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
// $WHESTBAKE_CONFIG_FILE, else "" for none.
func ConfigFile(fs *pflag.FlagSet) string {
	if f := fs.Lookup(FileFlag); f != nil && f.Changed {
		return f.Value.String()
	}
	return os.Getenv(FileEnv)
}

// FlagHint is what to tell a user who passes a flag that a command lacks
// but the tool it stands in for has: whestbench's --token on
// `dataset download`, say.
type FlagHint struct {
	Command string // the command's path: "whestbake dataset download"
	Flag    string // the flag's name, without dashes
	Hint    string // what to do instead, which the error says after the flag
}

// Strict makes every usage problem cobra finds in root's tree a usage Error:
// flag errors, such as unknown flags, bad values and missing values, where
// an unknown flag that hints name gets its hint; argument-count errors of
// the commands' Args, said in words by argsError; and unknown subcommands,
// also before --help, with suggestions. A command with subcommands takes
// no arguments of its own, and shows its help when called without a
// subcommand unless it has its own Run. Call it once the tree is complete.
func Strict(root *cobra.Command, hints ...FlagHint) {
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return flagError(cmd, err, hints)
	})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		switch {
		case c.HasSubCommands():
			c.Args = unknownSubcommand
			// A group's own flags come before its verb: parsing stops at the
			// first argument, so `group nosuch --help` reaches Args, an
			// error, instead of cobra's help, which runs before Args.
			c.Flags().SetInterspersed(false)
			if !c.Runnable() {
				// cobra would show the help itself, but only after skipping
				// Args, so an unknown subcommand would exit 0.
				c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
			}
		case c.Args != nil:
			args := c.Args
			c.Args = func(cmd *cobra.Command, a []string) error {
				return argsError(cmd, a, args(cmd, a))
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func flagError(cmd *cobra.Command, err error, hints []FlagHint) error {
	var ne *pflag.NotExistError
	if !errors.As(err, &ne) {
		return Usage(err)
	}
	name := ne.GetSpecifiedName()
	if name == "config" && cmd.Flags().Lookup(FileFlag) != nil {
		return Usagef("%s takes its config file as --%s FILE (or %s); "+
			"--config is a dataset's HF config name, for `whestbake dataset bake`",
			cmd.CommandPath(), FileFlag, FileEnv)
	}
	for _, h := range hints {
		if h.Flag == name && h.Command == cmd.CommandPath() {
			return Usagef("unknown flag --%s: %s", name, h.Hint)
		}
	}
	return Usage(err)
}

// OperandsAnnotation, in a command's Annotations, says in words what its
// arguments are, for the error a wrong number of them gets; without it that
// error names the operands of the command's Use line.
const OperandsAnnotation = "whestbake/operands"

// argsError is err, cobra's count of a command's arguments, as a usage
// error in words: what the command needs, with the required flags that are
// missing too so that one error says everything, what it got, and its
// usage line.
func argsError(cmd *cobra.Command, got []string, err error) error {
	if err == nil {
		return nil
	}
	operands := cmd.Annotations[OperandsAnnotation]
	if operands == "" {
		operands = strings.Join(operandsOf(cmd.Use), " ")
	}
	var what string
	switch {
	case operands == "":
		what = "takes no arguments, got " + quoteAll(got)
	case len(got) == 0:
		what = "needs " + andList(append([]string{operands}, dashed(missingFlags(cmd))...))
	default:
		what = fmt.Sprintf("takes %s, got %s (%v)", operands, quoteAll(got), err)
	}
	return Usagef("%s %s; usage: %s", cmd.CommandPath(), what, cmd.UseLine())
}

// operandsOf lists the operands of a Use line: its words after the verb
// that are neither flags, nor their values such as --output DIR, nor
// optional, in […].
func operandsOf(use string) []string {
	words := strings.Fields(use)
	var out []string
	for i := 1; i < len(words); i++ {
		w := words[i]
		switch {
		case strings.HasPrefix(w, "-"):
			if i+1 < len(words) &&
				!strings.HasPrefix(words[i+1], "-") &&
				!strings.HasPrefix(words[i+1], "[") {
				i++ // the flag's value
			}
		case strings.HasPrefix(w, "["):
		default:
			out = append(out, w)
		}
	}
	return out
}

// requiredAnnotation, in a command's Annotations, lists the flags it cannot
// run without, declared by Require, comma-separated.
const requiredAnnotation = "whestbake/required-flags"

// Require declares flags that cmd cannot run without. CheckRequired then
// reports every one of them that is missing at once, and so does the error
// of a command called without its arguments.
func Require(cmd *cobra.Command, flags ...string) {
	if cmd.Annotations == nil {
		cmd.Annotations = map[string]string{}
	}
	cmd.Annotations[requiredAnnotation] = strings.Join(flags, ",")
}

// CheckRequired is nil when every flag Require declared for cmd is set, and
// otherwise one usage error naming all that are not, each followed by
// note(flag): where else its value can come from, "" for nowhere; a nil
// note adds nothing.
func CheckRequired(cmd *cobra.Command, note func(flag string) string) error {
	if note == nil {
		note = func(string) string { return "" }
	}
	missing := missingFlags(cmd)
	switch len(missing) {
	case 0:
		return nil
	case 1:
		return Usagef("--%s is required%s", missing[0], note(missing[0]))
	}
	lines := []string{fmt.Sprintf("%d required flags are missing:", len(missing))}
	for _, f := range missing {
		lines = append(lines, "  --"+f+note(f))
	}
	return Usage(safetext.LinesError{Text: lines})
}

// missingFlags are the flags Require declared for cmd that are not set.
func missingFlags(cmd *cobra.Command) []string {
	var out []string
	for _, f := range strings.Split(cmd.Annotations[requiredAnnotation], ",") {
		if f != "" && !cmd.Flags().Changed(f) {
			out = append(out, f)
		}
	}
	return out
}

func dashed(flags []string) []string {
	out := make([]string, len(flags))
	for i, f := range flags {
		out[i] = "--" + f
	}
	return out
}

// andList joins words as a sentence does: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = strconv.Quote(a)
	}
	return strings.Join(q, " ")
}

// CheckHelpArgs refuses, before cobra runs, an unknown verb that cobra would
// answer with a parent's help and exit 0. One is after a group's --help,
// `dataset --help nosuch`, as cobra shows help before it checks arguments;
// the other is in the help command's path, `help dataset nosuch`, as
// cobra's help shows the deepest command it found. Every other unknown
// verb reaches the group's Args under Strict.
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
// flag's value, "" if none: what cobra would take for a verb of cmd.
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
	verbs := "use one of " + strings.Join(names, ", ")
	if s := suggestions(cmd, args[0]); len(s) > 0 {
		verbs = "did you mean " + strings.Join(s, " or ") + "? (or " + verbs + ")"
	}
	return Usagef("unknown command %q for %q: %s", args[0], cmd.CommandPath(), verbs)
}

// suggestions are what a mistyped verb of cmd most likely meant: cmd's verbs
// within two edits of it or starting with it, by cobra's rule, as "stauts" →
// "status"; and any command of the tree with exactly its name or listing
// it in SuggestFor, as "merge" → "dataset merge"; each quoted as typed
// after the program's name.
func suggestions(cmd *cobra.Command, typed string) []string {
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2
	}
	root := cmd.Root()
	var out []string
	add := func(c *cobra.Command) {
		s := strconv.Quote(strings.TrimPrefix(c.CommandPath(), root.Name()+" "))
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, name := range cmd.SuggestionsFor(typed) {
		if c, _, err := cmd.Find([]string{name}); err == nil {
			add(c)
		}
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			named := sub.Name() == typed || slices.Contains(sub.SuggestFor, typed)
			if sub.IsAvailableCommand() && named {
				add(sub)
			}
			walk(sub)
		}
	}
	walk(root)
	return out
}
