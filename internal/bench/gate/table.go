package gate

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Write prints the report as one markdown table of workload, metric, baseline,
// now, change, allowed and verdict, then a numbered note per row that needs
// one, so a long error does not widen a column.
func (r Report) Write(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(cells ...string) { fmt.Fprintf(tw, "| %s\t|\n", strings.Join(cells, "\t| ")) }
	row("workload", "metric", "baseline", "now", "change", "allowed", "verdict")
	fmt.Fprintln(tw, "|---\t|---\t|---:\t|---:\t|---:\t|---:\t|---\t|")
	var notes []string
	for _, x := range r.Rows {
		verdict := string(x.Verdict)
		note := x.Note
		if x.Against != "" {
			note = strings.TrimPrefix(note+"; compared with the entry of "+x.Against, "; ")
		}
		if x.BasePeer != "" && x.BasePeer != x.Peer {
			note = strings.TrimPrefix(note+"; the baseline's peer ran on "+x.BasePeer+
				": a peer on another BLAS or core moves this ratio whatever our code does", "; ")
		}
		if note != "" {
			notes = append(notes, fmt.Sprintf("%d. %s / %s: %s",
				len(notes)+1, x.Workload, x.Name, note))
			verdict += fmt.Sprintf(" (%d)", len(notes))
		}
		allowed := "-"
		if x.Allowed > 0 {
			allowed = pct(x.Allowed)
		}
		metric := x.Name + " (" + x.Unit + ")"
		if x.Peer != "" {
			metric += ", peer on " + x.Peer
		}
		row(x.Workload, metric, num(x.Base), num(x.Now), signedPct(x.Change), allowed, verdict)
	}
	tw.Flush()
	for _, x := range r.Rows {
		if x.Verdict == New {
			notes = append(notes,
				"new: not in the baseline, so not gated; `make bench-baseline` records it.")
			break
		}
	}
	for _, x := range r.Rows {
		if x.Verdict == NotGated {
			notes = append(notes, fmt.Sprintf("recorded, not gated: no baseline for %s. "+
				"The ratios to the numpy peer depend on the CPU, "+
				"so they are gated only against a baseline of the same class; "+
				"`make bench-baseline` on this machine records one.", r.Class))
			break
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
}

// num prints four significant digits, without an exponent below 1e9.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e4 && math.Abs(v) < 1e9:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func signedPct(f float64) string {
	switch {
	case math.IsNaN(f):
		return "-"
	case math.IsInf(f, 1):
		return "+∞"
	}
	return fmt.Sprintf("%+.1f %%", 100*f)
}
