package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/safetext"
	"github.com/whestbake/whestbake/internal/settings"
)

func newWatchCmd() *cobra.Command {
	var every, rideOut time.Duration
	var asJSON bool
	cmd := starterVerb(&cobra.Command{
		Use:   "watch ID",
		Short: "Show a bake's status, refreshed until it ends (exit status 1 if it failed)",
		Args:  bakeIDArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cfg, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			show := showStatus(cfg, cmd.OutOrStdout())
			if asJSON {
				show = func(st bakeclient.Status) error {
					line := statusJSON{Schema: statusSchema, Status: st}
					return writeJSONLine(cmd.OutOrStdout(), line)
				}
			}
			id := args[0]
			watch := bakeclient.WatchInput{
				ID:      id,
				Every:   every,
				Each:    show,
				RideOut: rideOut,
				Outage:  sayOutage(cfg, rideOut, cmd.ErrOrStderr()),
			}
			st, err := c.Watch(cmd.Context(), watch)
			if err != nil {
				return detached(cmd.Context(), id, err)
			}
			return st.Err()
		},
	})
	cmd.Flags().DurationVar(&every, "interval", 2*time.Second, "refresh interval")
	reconnectFlag(cmd, &rideOut)
	jsonFlag(cmd, &asJSON, "print each refresh's status as one line of JSON")
	return cmd
}

// reconnectFlag is --reconnect-for of the verbs that follow a bake.
func reconnectFlag(cmd *cobra.Command, rideOut *time.Duration) {
	cmd.Flags().DurationVar(rideOut, "reconnect-for", bakeclient.DefaultRideOut,
		"how long to keep asking a Temporal server that stopped answering (a restart, an "+
			"upgrade) before giving up with exit status 3; the bake runs on either way")
}

// sayOutage tells, on stderr since stdout may be JSON, that the Temporal
// server stopped answering and the watch keeps asking, and when it answers
// again.
func sayOutage(cfg settings.Config, rideOut time.Duration, w io.Writer) func(bakeclient.Outage) {
	var told time.Time
	return func(o bakeclient.Outage) {
		now := time.Now()
		switch {
		case o.Over:
			fmt.Fprintf(w, "%s the Temporal server at %s answers again, after %s\n",
				now.Format(time.TimeOnly), cfg.Temporal.Address, formatDuration(now.Sub(o.Since)))
			told = time.Time{}
		case told.IsZero() || now.Sub(told) >= 30*time.Second:
			fmt.Fprintf(w, "%s the Temporal server at %s does not answer (%s); asking again "+
				"until %s: the bake runs on, on its workers\n",
				now.Format(time.TimeOnly), cfg.Temporal.Address, safetext.Line(o.Err.Error()),
				o.Since.Add(rideOut).Format(time.TimeOnly))
			told = now
		}
	}
}

// showStatus reprints the status: in place on a terminal, else whenever it
// changes.
func showStatus(cfg settings.Config, out io.Writer) func(bakeclient.Status) error {
	tty := isTerminal(out)
	last := ""
	return func(st bakeclient.Status) error {
		var buf bytes.Buffer
		printStatus(&buf, cfg, st, time.Now())
		switch key := progressKey(st); {
		case tty:
			fmt.Fprint(out, "\x1b[H\x1b[2J", buf.String())
		case key != last:
			fmt.Fprintf(out, "--- %s\n%s", time.Now().Format(time.TimeOnly), buf.String())
			last = key
		}
		return nil
	}
}

// follow shows a bake's progress until it ends, for bake --wait: one bar
// per split redrawn in place on a terminal; elsewhere, in logs or CI, one
// line per change, so a log reads as what happened when.
func follow(ctx context.Context, c *bakeclient.Client, cfg settings.Config, id string,
	rideOut time.Duration, out io.Writer,
) (bakeclient.Status, error) {
	tty := isTerminal(out)
	drawn := 0
	last := map[string]string{}
	draw := func(st bakeclient.Status) error {
		st = safetext.Strings(st) // the server's words, and the workers'
		now := time.Now()
		if !tty {
			for _, l := range changeLines(st, now, last) {
				fmt.Fprintf(out, "%s %s\n", now.Format(time.TimeOnly), l)
			}
			return nil
		}
		lines := progressLines(st, now)
		if drawn > 0 {
			fmt.Fprintf(out, "\x1b[%dA", drawn)
		}
		for _, l := range lines {
			fmt.Fprintf(out, "\x1b[2K%s\n", l)
		}
		drawn = len(lines)
		return nil
	}
	say := sayOutage(cfg, rideOut, out)
	outage := func(o bakeclient.Outage) {
		say(o)
		drawn = 0 // the bars start again below the line
	}
	st, err := c.Watch(ctx, bakeclient.WatchInput{
		ID:      id,
		Every:   time.Second,
		Each:    draw,
		RideOut: rideOut,
		Outage:  outage,
	})
	if err != nil {
		return st, detached(ctx, id, err)
	}
	return st, nil
}

// changeLines are the lines of what changed since last, the state each
// subject last printed, updated here: the bake's status and stage, and
// each split's stage and finished MLPs and slices. Neither the clock nor
// the running slices' partial progress counts as a change.
func changeLines(st bakeclient.Status, now time.Time, last map[string]string) []string {
	var lines []string
	emit := func(subject, key, line string) {
		if last[subject] != key {
			last[subject] = key
			lines = append(lines, line)
		}
	}
	emit("", fmt.Sprint(st.State, st.Stage),
		fmt.Sprintf("bake %s: %s, stage %s", st.ID, st.State, orDash(st.Stage)))
	for _, s := range st.Splits {
		line := fmt.Sprintf("  split %s: %s, %d/%d MLPs", s.Name, s.Stage, s.MLPsDone, s.MLPsTotal)
		if s.SlicesTotal > 0 {
			line += fmt.Sprintf(", %d/%d slices", s.SlicesDone, s.SlicesTotal)
			if s.SlicesRunning > 0 {
				line += fmt.Sprintf(" (%d running)", s.SlicesRunning)
			}
		}
		if e := eta(s, now); e != "-" && e != "done" {
			line += ", ETA " + e
		}
		emit(s.Name, fmt.Sprint(s.Stage, s.MLPsDone, s.SlicesDone, s.SlicesRunning), line)
	}
	return lines
}

const barWidth = 24

func progressLines(st bakeclient.Status, now time.Time) []string {
	header := fmt.Sprintf("bake %s: %s, stage %s, %s",
		st.ID, st.State, st.Stage, formatDuration(now.Sub(st.Start)))
	lines := []string{header}
	for _, s := range st.Splits {
		frac := 0.0
		if s.MLPsTotal > 0 {
			frac = s.Done() / float64(s.MLPsTotal)
		}
		full := int(frac * barWidth)
		bar := strings.Repeat("█", full) + strings.Repeat("░", barWidth-full)
		line := fmt.Sprintf("  %-12s %s %5.1f/%d MLPs  %-8s",
			s.Name, bar, s.Done(), s.MLPsTotal, s.Stage)
		if s.SlicesTotal > 0 {
			line += fmt.Sprintf("  slices %d/%d", s.SlicesDone, s.SlicesTotal)
			if s.SlicesRunning > 0 {
				line += fmt.Sprintf(" (%d running)", s.SlicesRunning)
			}
		}
		if e := eta(s, now); e != "-" && e != "done" {
			line += "  ETA " + e
		}
		lines = append(lines, line)
	}
	return lines
}

// progressKey changes when anything but the clock does.
func progressKey(st bakeclient.Status) string {
	key := fmt.Sprint(st.State, st.Stage, len(st.Pending))
	for _, s := range st.Splits {
		key += fmt.Sprint("|", s.Stage, s.MLPsDone, s.SlicesDone, s.SlicesRunning)
	}
	return key
}

// detached explains that stopping to watch does not stop the bake: after
// Ctrl-C, and after a Temporal server that did not answer for the whole
// ride-out, which exits 3 with cmdline.Detached.
func detached(ctx context.Context, id string, err error) error {
	var lost *bakeclient.ServerLost
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("stopped watching; the bake keeps running: "+
			"follow it with `whestbake watch %s`, stop it with `whestbake cancel %s`", id, id)
	case errors.As(err, &lost):
		return cmdline.Detached{Err: fmt.Errorf("stopped watching: %w; the bake keeps running "+
			"on its workers: once the server answers, follow it again with `whestbake watch %s` "+
			"(or `whestbake bake --id %s --wait` with its config)", err, id, id)}
	}
	return err
}

// isTerminal: redraw in place on a terminal; plain lines in logs and CI.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && os.Getenv("WHESTBAKE_NO_PROGRESS") == ""
}
