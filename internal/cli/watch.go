package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"
	"golang.org/x/term"

	"github.com/whestbake/whestbake/internal/settings"
)

func newWatchCmd() *cobra.Command {
	var every time.Duration
	cmd := starterVerb(&cobra.Command{
		Use:   "watch ID",
		Short: "Show a bake's status, refreshed until it ends (exit status 1 if it failed)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cfg, err := connect(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			return watch(cmd.Context(), c, cfg, args[0], every, cmd.OutOrStdout())
		},
	})
	cmd.Flags().DurationVar(&every, "interval", 2*time.Second, "refresh interval")
	return cmd
}

// watch reprints the status: in place on a terminal, else whenever it changes.
func watch(ctx context.Context, c client.Client, cfg settings.Config, id string, every time.Duration, out io.Writer) error {
	w := newBakeWatcher(c, id)
	tty := isTerminal(out)
	last := ""
	for {
		st, err := w.collect(ctx)
		if err != nil {
			return detached(ctx, id, err)
		}
		var buf bytes.Buffer
		printStatus(&buf, cfg, st, time.Now())
		switch key := progressKey(st); {
		case tty:
			fmt.Fprint(out, "\x1b[H\x1b[2J", buf.String())
		case key != last:
			fmt.Fprintf(out, "--- %s\n%s", time.Now().Format(time.TimeOnly), buf.String())
			last = key
		}
		if !st.running() {
			return st.exitError()
		}
		if err := sleep(ctx, every); err != nil {
			return detached(ctx, id, err)
		}
	}
}

// follow draws one progress bar per split until the bake ends (bake --wait).
func follow(ctx context.Context, c client.Client, id string, out io.Writer) (bakeState, error) {
	w := newBakeWatcher(c, id)
	tty := isTerminal(out)
	drawn, last := 0, ""
	for {
		st, err := w.collect(ctx)
		if err != nil {
			return st, detached(ctx, id, err)
		}
		lines := progressLines(st, time.Now())
		if tty {
			if drawn > 0 {
				fmt.Fprintf(out, "\x1b[%dA", drawn)
			}
			for _, l := range lines {
				fmt.Fprintf(out, "\x1b[2K%s\n", l)
			}
			drawn = len(lines)
		} else if key := progressKey(st); key != last {
			fmt.Fprintln(out, strings.Join(lines, "\n"))
			last = key
		}
		if !st.running() {
			return st, nil
		}
		if err := sleep(ctx, time.Second); err != nil {
			return st, detached(ctx, id, err)
		}
	}
}

const barWidth = 24

func progressLines(st bakeState, now time.Time) []string {
	lines := []string{fmt.Sprintf("bake %s: %s, stage %s, %s", st.ID, statusWord(st.Status), st.Stage, formatDuration(now.Sub(st.Start)))}
	for _, s := range st.Splits {
		frac := 0.0
		if s.MLPsTotal > 0 {
			frac = s.done() / float64(s.MLPsTotal)
		}
		full := int(frac * barWidth)
		bar := strings.Repeat("█", full) + strings.Repeat("░", barWidth-full)
		line := fmt.Sprintf("  %-12s %s %5.1f/%d MLPs  %-8s", s.Split, bar, s.done(), s.MLPsTotal, s.Stage)
		if s.SlicesTotal > 0 {
			line += fmt.Sprintf("  slices %d/%d", s.SlicesDone, s.SlicesTotal)
			if s.SlicesRunning > 0 {
				line += fmt.Sprintf(" (%d running)", s.SlicesRunning)
			}
		}
		if e := eta(s.SplitProgress, now); e != "-" && e != "done" {
			line += "  ETA " + e
		}
		lines = append(lines, line)
	}
	return lines
}

// progressKey changes when anything but the clock does.
func progressKey(st bakeState) string {
	key := fmt.Sprint(st.Status, st.Stage, len(st.Pending))
	for _, s := range st.Splits {
		key += fmt.Sprint("|", s.Stage, s.MLPsDone, s.SlicesDone, s.SlicesRunning)
	}
	return key
}

// detached explains that stopping to watch does not stop the bake.
func detached(ctx context.Context, id string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("stopped watching; the bake keeps running: follow it with `whestbake watch %s`, stop it with `whestbake cancel %s`", id, id)
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// isTerminal: redraw in place on a terminal; plain lines in logs and CI.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("WHESTBAKE_NO_PROGRESS") == ""
}
