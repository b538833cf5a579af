package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/bakeclient"
	"github.com/whestbake/whestbake/internal/safetext"
	"github.com/whestbake/whestbake/internal/settings"
)

func newStatusCmd() *cobra.Command {
	var asJSON bool
	cmd := starterVerb(&cobra.Command{
		Use: "status ID",
		Short: "Show a bake: stage, per-split progress, ETA, " +
			"pending activities with heartbeat details, result or failure",
		Args: bakeIDArg,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, cfg, err := openClient(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			st, err := c.Status(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				err = writeJSON(cmd.OutOrStdout(), statusJSON{Schema: statusSchema, Status: st})
			} else {
				printStatus(cmd.OutOrStdout(), cfg, st, time.Now())
			}
			if err != nil {
				return err
			}
			return st.Err()
		},
	})
	jsonFlag(cmd, &asJSON, "print the status as JSON")
	return cmd
}

// statusJSON is whestbake.status/v1: the status, named.
type statusJSON struct {
	Schema string `json:"schema"`
	bakeclient.Status
}

// printStatus prints st as text, its times relative to now.
func printStatus(w io.Writer, cfg settings.Config, st bakeclient.Status, now time.Time) {
	st = safetext.Strings(st) // the server's words, and the workers'
	printHeader(w, cfg, st, now)
	printSplits(w, st, now)
	printStopped(w, st)
	printPending(w, st, now)
	printResult(w, st)
}

// printHeader says what the bake is, where, and how long it ran.
func printHeader(w io.Writer, cfg settings.Config, st bakeclient.Status, now time.Time) {
	fmt.Fprintf(w, "Bake %s: %s", st.ID, strings.ToUpper(st.State))
	if st.Stage != "" {
		fmt.Fprintf(w, ", stage %s", st.Stage)
	}
	if st.End.IsZero() {
		fmt.Fprintf(w, ", running for %s\n", formatDuration(now.Sub(st.Start)))
	} else {
		fmt.Fprintf(w, ", took %s (ended %s)\n",
			formatDuration(st.End.Sub(st.Start)), st.End.Local().Format(time.DateTime))
	}
	fmt.Fprintf(w, "  workflow %s  run %s\n  Web UI   %s\n",
		st.WorkflowID, st.RunID, webUILink(cfg, st.WorkflowID))
	s := st.Shape
	fmt.Fprintf(w, "  shape    width %d, depth %d, %d samples, sampler %s; "+
		"%d MLPs per slice, %s slices in flight per split\n",
		s.Width, s.Depth, s.NSamples, s.Sampler,
		s.SliceSize, bakeclient.InFlightText(s.MaxInFlight))
}

// printSplits prints one row per split. COMPUTED, RESUMED and REUSED count
// the MLPs of finished slices by how each was obtained: from scratch, from
// a checkpoint, or from an earlier attempt or an earlier run of this bake
// ID. STOPS counts the slice attempts that workers stopped gracefully and
// handed back.
func printSplits(w io.Writer, st bakeclient.Status, now time.Time) {
	const row = "  %-16s %-9s %-11s %-22s %-8s %-7s %-6s %-5s %s\n"
	fmt.Fprintf(w, "\n"+row, "SPLIT", "STAGE", "MLPS", "SLICES",
		"COMPUTED", "RESUMED", "REUSED", "STOPS", "ETA")
	for _, s := range st.Splits {
		slices := "-"
		if s.SlicesTotal > 0 {
			slices = fmt.Sprintf("%d/%d", s.SlicesDone, s.SlicesTotal)
			if s.SlicesRunning > 0 {
				slices += fmt.Sprintf(" (%d running)", s.SlicesRunning)
				if s.MaxInFlight > s.SlicesRunning {
					slices += fmt.Sprintf(" of %d", s.MaxInFlight)
				}
			}
		}
		computed, resumed, reused, stops := "-", "-", "-", "-"
		if h := s.History; h != nil {
			computed = fmt.Sprint(h.Computed)
			resumed = fmt.Sprint(h.Resumed)
			reused = fmt.Sprint(h.Reused)
			stops = fmt.Sprint(h.Stops)
		}
		mlps := fmt.Sprintf("%d/%d", s.MLPsDone, s.MLPsTotal)
		fmt.Fprintf(w, row, s.Name, s.Stage, mlps, slices,
			computed, resumed, reused, stops, eta(s, now))
	}
	printRetried(w, st)
	for _, s := range st.Splits {
		if h := s.History; h != nil && h.Discarded > 0 {
			fmt.Fprintf(w, "  split %s: %d damaged objects in S3 "+
				"(results, checkpoints, identity blocks, "+
				"partial manifests) were discarded and recomputed; see the GPU workers' logs\n",
				s.Name, h.Discarded)
		}
	}
}

// printRetried lists the finished slices that took more than one attempt,
// with how the last failed one ended: a GPU host that died mid-slice
// leaves its heartbeat timeout here once the slice has moved on.
func printRetried(w io.Writer, st bakeclient.Status) {
	for _, s := range st.Splits {
		if s.History == nil {
			continue
		}
		for _, k := range slices.Sorted(maps.Keys(s.History.Retried)) {
			r := s.History.Retried[k]
			fmt.Fprintf(w, "  split %s: %s finished after %d attempts", s.Name, r.Slice, r.Attempts)
			if r.Stops > 0 {
				fmt.Fprintf(w, ", %d stopped by their worker", r.Stops)
			}
			if r.LastFailure != "" {
				fmt.Fprintf(w, "; last failure %s%s", safetext.Line(r.LastFailure), failureNote(r.LastFailure))
			}
			fmt.Fprintln(w)
		}
	}
}

// failureNote says what a slice attempt's failure kind means for the
// fleet, where that is not plain from its name.
func failureNote(kind string) string {
	switch kind {
	case bakeclient.HeartbeatTimeout:
		return " (its worker stopped heartbeating: a host lost without a stop)"
	case bakeapi.ErrWorkerStopping:
		return " (its worker was stopped and handed the slice back)"
	}
	return ""
}

// printStopped says, for a bake that ended without completing, in which
// stage it ended and what was running then, which is what was cancelled
// or cut short by the failure, and what never started.
func printStopped(w io.Writer, st bakeclient.Status) {
	if st.Running() || st.Completed() {
		return
	}
	fmt.Fprintf(w, "\n  %s during stage %s. Running then, and stopped:\n",
		strings.ToUpper(st.State[:1])+st.State[1:], orDash(st.Stage))
	listed := false
	for _, s := range st.Splits {
		if s.History == nil || s.Stage == bakeapi.StageDone {
			continue
		}
		if parts := stoppedSlices(s); len(parts) > 0 {
			fmt.Fprintf(w, "    split %s: %s\n", s.Name, strings.Join(parts, ", "))
			listed = true
		}
	}
	for _, o := range st.Stopped {
		fmt.Fprintf(w, "    bake: %s\n", o)
		listed = true
	}
	if !listed {
		fmt.Fprintln(w, "    nothing")
	}
	fmt.Fprintln(w, "  Finished MLPs stay in S3: "+
		"starting the bake again with the same ID and config reuses them.")
}

// stoppedSlices describes a split's slices that were running when the bake
// ended, those that ran and ended unfinished, and how many never started.
func stoppedSlices(s bakeclient.Split) []string {
	h := s.History
	var parts []string
	ran := map[int]bool{} // slices that ran or were running, unfinished
	for _, o := range h.Open {
		text := o.String()
		if o.Slice != nil {
			ran[o.Slice.Index] = true
			if r := h.Unfinished[o.Slice.Index]; r != nil && r.Stops > 0 {
				text += fmt.Sprintf(" after %d stop(s) by its workers", r.Stops)
			}
		}
		parts = append(parts, text)
	}
	// Slices that ran and ended unfinished, with nothing running: the
	// one that failed the bake, and those handed back by their workers.
	for _, k := range slices.Sorted(maps.Keys(h.Unfinished)) {
		if r := h.Unfinished[k]; !ran[k] && r.Attempts > 0 {
			ran[k] = true
			parts = append(parts, r.String())
		}
	}
	if left := s.SlicesTotal - s.SlicesDone - len(ran); left > 0 {
		parts = append(parts, fmt.Sprintf("%d slice(s) not started", left))
	}
	return parts
}

// printPending lists the pending activities with their attempts and last
// heartbeat, or says that no control worker answered.
func printPending(w io.Writer, st bakeclient.Status, now time.Time) {
	if st.ProgressQueryFailed {
		fmt.Fprintln(w, "  (no live progress: no control worker answered the progress query; "+
			"is `whestbake-worker --role control` running?)")
	}
	if len(st.Pending) == 0 {
		return
	}
	fmt.Fprintln(w, "\n  Pending activities:")
	for _, p := range st.Pending {
		where := strings.TrimPrefix(p.WorkflowID, st.WorkflowID+"/")
		fmt.Fprintf(w, "    %s %s: %s, attempt %d", where, p.Activity, p.State, p.Attempt)
		if p.MaxAttempts > 0 {
			fmt.Fprintf(w, " of %d", p.MaxAttempts)
		}
		if !p.LastHeartbeat.IsZero() {
			fmt.Fprintf(w, ", heartbeat %s ago", formatDuration(now.Sub(p.LastHeartbeat)))
		}
		if p.Details != "" {
			fmt.Fprintf(w, ": %s", p.Details)
		}
		fmt.Fprintln(w)
		if p.LastFailure != "" {
			fmt.Fprintf(w, "      last failure: %s\n", p.LastFailure)
		}
	}
}

// printResult says where a completed bake put its dataset, or why it failed.
func printResult(w io.Writer, st bakeclient.Status) {
	if r := st.Result; r != nil {
		fmt.Fprintf(w, "\n  dataset  %s (manifest sha256 %s)\n", r.Dataset, r.ManifestSHA256)
		if r.Release != "" {
			fmt.Fprintf(w, "  release  %s\n", r.Release)
		}
		if r.Hub != "" {
			fmt.Fprintf(w, "  hub      %s (commit %s)\n", r.Hub, r.HubCommit)
		}
	}
	if f := st.Failure; f != nil {
		fmt.Fprintf(w, "\n  failure  %s\n", f.Message)
	}
}

// eta is a split's ETA as status shows it: "done", "merging soon", the
// time left, or "-" while bakeclient.Split.Remaining does not know it.
func eta(s bakeclient.Split, now time.Time) string {
	if s.Stage == bakeapi.StageDone {
		return "done"
	}
	left, ok := s.Remaining(now)
	switch {
	case !ok:
		return "-"
	case left == 0:
		return "merging soon"
	}
	return formatDuration(left)
}
