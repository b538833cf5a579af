package cmdline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"testing"

	"github.com/spf13/cobra"
)

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{errors.New("unknown command, but not from cobra"), ExitError},
		{Usagef("--x is required"), ExitUsage},
		{fmt.Errorf("wrapped: %w", Usage(errors.New("bad"))), ExitUsage},
		{Interrupted{Signal: syscall.SIGINT, Err: context.Canceled}, ExitInterrupted},
		{Interrupted{Signal: syscall.SIGTERM}, 143},
		{
			fmt.Errorf("stopped: %w", Interrupted{Signal: syscall.SIGINT, Err: Usagef("x")}),
			ExitInterrupted,
		},
	} {
		if got := ExitCode(c.err); got != c.want {
			t.Errorf("ExitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
	if Usage(nil) != nil {
		t.Error("Usage(nil) is not nil")
	}
}

// A cobra tree after Strict: each of cobra's own usage errors is a usage
// Error, and nothing else is.
func TestStrict(t *testing.T) {
	newTree := func() *cobra.Command {
		root := &cobra.Command{Use: "app", SilenceErrors: true, SilenceUsage: true}
		group := &cobra.Command{Use: "group"}
		leaf := &cobra.Command{
			Use:  "leaf",
			Args: cobra.ExactArgs(1),
			RunE: func(*cobra.Command, []string) error { return errors.New("failed") },
		}
		leaf.Flags().Int("n", 0, "")
		leaf.Flags().String(FileFlag, "", "")
		group.AddCommand(leaf)
		root.AddCommand(group)
		Strict(root)
		return root
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"nope"}, ExitUsage},
		{[]string{"group", "nope"}, ExitUsage},
		{[]string{"group", "nope", "--help"}, ExitUsage},
		{[]string{"nope", "-h"}, ExitUsage},
		{[]string{"group", "--help"}, ExitOK},
		{[]string{"group", "leaf", "--help"}, ExitOK},
		{[]string{"group", "leaf"}, ExitUsage},
		{[]string{"group", "leaf", "a", "b"}, ExitUsage},
		{[]string{"group", "leaf", "a", "--n", "x"}, ExitUsage},
		{[]string{"group", "leaf", "a", "--m"}, ExitUsage},
		{[]string{"group", "leaf", "a", "--config", "f.yaml"}, ExitUsage},
		{[]string{"group", "leaf", "a"}, ExitError},
		{[]string{"group"}, ExitOK},
		{nil, ExitOK},
	} {
		root := newTree()
		root.SetOut(io.Discard)
		root.SetArgs(c.args)
		if got := ExitCode(root.Execute()); got != c.want {
			t.Errorf("%v: exit %d, want %d", c.args, got, c.want)
		}
	}
}

// A signal's error hides a bare "context canceled" and keeps any other
// word the command had; without a signal the error is the command's own.
func TestInterruption(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	err := Interruption(ctx, context.Canceled)
	if !errors.Is(err, context.Canceled) || ExitCode(err) != ExitError {
		t.Errorf("no signal: %v, exit %d", err, ExitCode(err))
	}
	cancel(Interrupted{Signal: syscall.SIGINT})
	err = Interruption(ctx, fmt.Errorf("bake: %w", context.Canceled))
	if err.Error() != "interrupted (Ctrl-C)" || ExitCode(err) != 130 {
		t.Errorf("after SIGINT: %q, exit %d", err, ExitCode(err))
	}
	const own = "stopped watching; the bake keeps running"
	if err := Interruption(ctx, errors.New(own)); err.Error() != own {
		t.Errorf("after SIGINT, the command's own words: %q", err)
	}
	if err := Interruption(ctx, nil); err != nil {
		t.Errorf("a command that finished all the same: %v", err)
	}
}

// Usage problems in words: suggestions for a mistyped verb, what a verb's
// arguments are, every missing flag at once, another tool's flags hinted.
func TestUsageInWords(t *testing.T) {
	newTree := func() *cobra.Command {
		root := &cobra.Command{Use: "app", SilenceErrors: true, SilenceUsage: true}
		group := &cobra.Command{Use: "group"}
		merge := &cobra.Command{
			Use:         "merge PART... --output DIR",
			Args:        cobra.MinimumNArgs(1),
			Annotations: map[string]string{OperandsAnnotation: "the parts to merge"},
			RunE: func(cmd *cobra.Command, _ []string) error {
				return CheckRequired(cmd, nil)
			},
		}
		merge.Flags().String("output", "", "")
		merge.Flags().String("label", "", "")
		Require(merge, "output", "label")
		status := &cobra.Command{
			Use:  "status ID",
			Args: cobra.ExactArgs(1),
			RunE: func(*cobra.Command, []string) error { return nil },
		}
		group.AddCommand(merge)
		root.AddCommand(group, status)
		Strict(root, FlagHint{Command: "app group merge", Flag: "token", Hint: "use TOKEN_FILE"})
		return root
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts"}, `unknown command "stauts" for "app": did you mean "status"? ` +
			`(or use one of completion, group, status)`},
		{[]string{"merge"}, `did you mean "group merge"?`},
		{[]string{"group", "merg"}, `did you mean "group merge"?`},
		{[]string{"group", "merge"}, "app group merge needs the parts to merge, " +
			"--output and --label; usage: app group merge PART... --output DIR"},
		{[]string{"group", "merge", "a"}, "2 required flags are missing:\n  --output\n  --label"},
		{[]string{"group", "merge", "a", "--label", "x"}, "--output is required"},
		{[]string{"status"}, "app status needs ID; usage: app status ID"},
		{
			[]string{"status", "a", "b"},
			`app status takes ID, got "a" "b" (accepts 1 arg(s), received 2)`,
		},
		{[]string{"group", "merge", "a", "--token", "t"}, "unknown flag --token: use TOKEN_FILE"},
	} {
		root := newTree()
		root.SetOut(io.Discard)
		root.SetArgs(c.args)
		err := root.Execute()
		if ExitCode(err) != ExitUsage || err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: exit %d, %v; want a usage error with %q",
				c.args, ExitCode(err), err, c.want)
		}
	}
	var b bytes.Buffer
	root := newTree()
	root.SetOut(&b)
	root.SetArgs([]string{"frobnicate"})
	if err := root.Execute(); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("nothing like frobnicate, yet %v", err)
	}
}
