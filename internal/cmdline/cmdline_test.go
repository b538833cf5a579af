package cmdline

import (
	"errors"
	"fmt"
	"io"
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
		leaf := &cobra.Command{Use: "leaf", Args: cobra.ExactArgs(1), RunE: func(*cobra.Command, []string) error {
			return errors.New("failed")
		}}
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
