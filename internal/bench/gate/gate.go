// Package gate decides whether a run of the benchmark suite regressed against
// the committed baseline, bench/baseline.json: per metric, the median of its
// repetitions is compared with the baseline's median, and a change for the
// worse fails the gate when it exceeds the margin of 7 % plus the metric's
// measured noise. The suite that produces the figures is internal/bench/suite;
// this package only compares, so its rules can be tested without a clock.
package gate

import (
	"fmt"
	"math"
	"slices"
)

// DefaultMargin is the change for the worse, beyond noise, that fails the
// gate: TorchBench's 7 % rule.
const DefaultMargin = 0.07

// Better says which direction of a metric is an improvement.
type Better string

// The two directions: lower for memory and counts, higher for speed ratios.
const (
	Lower  Better = "lower"
	Higher Better = "higher"
)

// Kind groups metrics by what their noise is like, so a gate can widen the
// margin of one group, such as speed measured on another machine, and not the others.
type Kind string

// The kinds of metric.
const (
	// Speed is a throughput ratio against a reference run beside it.
	Speed Kind = "speed"
	// Memory is a peak of RSS or heap on fixed inputs.
	Memory Kind = "memory"
	// Work is a count that does not depend on the clock: requests, bytes,
	// history events, allocations.
	Work Kind = "work"
)

// Metric is one figure of one workload, as the repetitions that measured it.
type Metric struct {
	Workload string    `json:"workload"`
	Name     string    `json:"name"`
	Unit     string    `json:"unit"`
	Kind     Kind      `json:"kind"`
	Better   Better    `json:"better"`
	Values   []float64 `json:"values,omitempty"`
	// InRun marks a ratio to a reference measured in the same run, this build
	// against the baseline commit's build: its baseline is 1 by definition,
	// and the baseline file keeps only the spread of an A/A run as its noise.
	InRun bool `json:"in_run,omitempty"`
	// Err says why the workload could not measure the metric; it fails the gate.
	Err string `json:"error,omitempty"`
	// Peer says what the reference of a ratio to a peer ran: whestbench's
	// version and the BLAS, its version and core, as in bench.Result.RanOn, since
	// the same OpenBLAS is several times slower per core where it picks a
	// slower core. The table prints it beside the ratio.
	Peer string `json:"peer,omitempty"`
	// Floor is the change, in the metric's unit, below which a difference
	// is noise whatever its relative size: a count per sample near 0, of a
	// loop that allocates nothing but the odd runtime buffer, moves by large
	// fractions of itself. Set by the suite, not kept in the baseline file.
	Floor float64 `json:"-"`
}

// Key names the metric in tables, in --only patterns and in the baseline file.
func (m Metric) Key() string { return m.Workload + " / " + m.Name }

// Median of the repetitions, 0 without any.
func (m Metric) Median() float64 { return median(m.Values) }

// trimFrom is the number of repetitions from which Noise ignores the one
// farthest from the median.
const trimFrom = 5

// Noise is the relative spread of the repetitions: the largest distance of a
// repetition from their median, as a fraction of the median, leaving out the
// farthest one when there are at least trimFrom. A neighbour's compile burst
// that hits one round of five should not blunt the gate for the whole run;
// the median already ignores that round. Noise is 0 for a single
// repetition, for identical ones and for a zero median.
func (m Metric) Noise() float64 {
	med := m.Median()
	if med == 0 {
		return 0
	}
	dev := make([]float64, len(m.Values))
	for i, v := range m.Values {
		dev[i] = math.Abs(v-med) / math.Abs(med)
	}
	slices.Sort(dev)
	if len(dev) >= trimFrom {
		dev = dev[:len(dev)-1]
	}
	if len(dev) == 0 {
		return 0
	}
	return dev[len(dev)-1]
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(v))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Verdict is the outcome of one metric.
type Verdict string

// The verdicts; Regressed, Missing and Failed fail the gate. NotGated is a
// CPU-dependent metric on a machine class without a baseline, see Refs.Compare:
// its figure is printed and judged against nothing.
const (
	OK        Verdict = "ok"
	Improved  Verdict = "improved"
	Regressed Verdict = "REGRESSED"
	New       Verdict = "new"
	NotGated  Verdict = "recorded, not gated"
	Missing   Verdict = "MISSING"
	Failed    Verdict = "FAILED"
)

// Fails reports whether the verdict fails the gate.
func (v Verdict) Fails() bool { return v == Regressed || v == Missing || v == Failed }

// Options are the gate's thresholds.
type Options struct {
	// Margin is the change for the worse beyond noise that fails a metric;
	// 0 means DefaultMargin.
	Margin float64
	// SpeedMargin replaces Margin for Speed metrics that are compared with the
	// baseline file, the ratios to the numpy peer and not the in-run A/B ones,
	// when positive: CI keeps that gate, against its class's baseline, but
	// only against gross losses, since its 3 rounds on a shared host of the
	// same class resolve a ratio more coarsely than a developer's check. The
	// same class is not the same host: other neighbours, clocks, hypervisor.
	SpeedMargin float64
	// MemoryMargin replaces Margin for Memory metrics when positive: a Go
	// process's peak RSS depends on when its concurrent collector runs, which
	// a loaded machine shifts: one slice bake peaked at 169 MiB on a quiet
	// machine and 225 MiB with other jobs running. So CI fails memory only
	// on gross growth while a developer's bench-check keeps the 7 % rule.
	MemoryMargin float64
	// OtherClassMemoryMargin, when positive, is the least margin of a Memory
	// metric that Refs.Compare compares with another machine class's entry: a
	// peak RSS is gated on every machine, within the allowance CI gives it.
	OtherClassMemoryMargin float64
	// Selected says which baseline metrics this run set out to measure; a
	// selected metric the run lacks is Missing. nil selects all.
	Selected func(Metric) bool
}

// Row is one metric's comparison.
type Row struct {
	Workload, Name, Unit string
	// Base and Now are medians; Base is 1 for an in-run ratio and NaN when the
	// baseline has no such metric, Now is NaN when the run has none.
	Base, Now float64
	// Change is Now/Base − 1, signed; Allowed is the margin plus the noise,
	// the change for the worse the metric may show.
	Change, Allowed float64
	Verdict         Verdict
	Note            string
	// Against names the class of the baseline entry the row was compared
	// with, set by Refs.Compare when it is not the one most rows were.
	Against string
	// Peer is what the run's ratio to a peer was measured against, BasePeer
	// the baseline's: Metric.Peer.
	Peer, BasePeer string
}

// Report is the comparison of a run with a baseline, in the run's order,
// then the baseline's missing metrics.
type Report struct {
	Rows []Row
	// Class is the machine class of the run, named by the note of NotGated
	// rows; Refs.Compare sets it.
	Class Class
}

// Failed reports whether any metric fails the gate.
func (r Report) Failed() bool {
	for _, row := range r.Rows {
		if row.Verdict.Fails() {
			return true
		}
	}
	return false
}

// Compare compares run with base metric by metric, matched by Key.
func Compare(base, run []Metric, o Options) Report {
	if o.Margin == 0 {
		o.Margin = DefaultMargin
	}
	baseBy := map[string]Metric{}
	for _, m := range base {
		baseBy[m.Key()] = m
	}
	var rep Report
	seen := map[string]bool{}
	for _, m := range run {
		seen[m.Key()] = true
		b, ok := baseBy[m.Key()]
		rep.Rows = append(rep.Rows, compareOne(b, ok, m, o))
	}
	for _, b := range base {
		if seen[b.Key()] || (o.Selected != nil && !o.Selected(b)) {
			continue
		}
		rep.Rows = append(rep.Rows, missingRow(b))
	}
	return rep
}

func baseValue(b Metric) float64 {
	if b.InRun {
		return 1
	}
	return b.Median()
}

// missingRow is the row of baseline metric b, which the run no longer measures.
func missingRow(b Metric) Row {
	return Row{
		Workload: b.Workload,
		Name:     b.Name,
		Unit:     b.Unit,
		Base:     baseValue(b),
		Now:      math.NaN(),
		Change:   math.NaN(),
		Verdict:  Missing,
		Note:     "the suite no longer measures it; `make bench-baseline` if that is intended",
	}
}

func compareOne(b Metric, haveBase bool, m Metric, o Options) Row {
	row := Row{
		Workload: m.Workload,
		Name:     m.Name,
		Unit:     m.Unit,
		Base:     math.NaN(),
		Now:      math.NaN(),
		Change:   math.NaN(),
		Peer:     m.Peer,
	}
	if haveBase {
		row.BasePeer = b.Peer
	}
	if m.Err != "" {
		row.Verdict = Failed
		row.Note = m.Err
		return row
	}
	row.Now = m.Median()
	switch {
	case m.InRun:
		// The reference ran beside it; the baseline file only contributes
		// the spread its A/A run showed.
		row.Base = 1
	case !haveBase:
		row.Verdict = New
		return row
	default:
		row.Base = b.Median()
	}
	margin := o.Margin
	if m.Kind == Speed && !m.InRun && o.SpeedMargin > 0 {
		margin = o.SpeedMargin
	}
	if m.Kind == Memory && o.MemoryMargin > 0 {
		margin = o.MemoryMargin
	}
	noise := m.Noise()
	if haveBase {
		noise = max(noise, b.Noise())
	}
	row.Allowed = margin + noise
	worse, better := judge(row.Base, row.Now, m.Better)
	row.Change = row.Now/row.Base - 1
	switch {
	case row.Base == 0 && row.Now == 0:
		row.Change = 0
		row.Verdict = OK
	case math.Abs(row.Now-row.Base) <= m.Floor:
		row.Verdict = OK
		if worse > row.Allowed || better > row.Allowed {
			row.Note = fmt.Sprintf("changed by %s %s, "+
				"within the %s %s below which this count is noise",
				num(math.Abs(row.Now-row.Base)), m.Unit, num(m.Floor), m.Unit)
		}
	case worse > row.Allowed:
		row.Verdict = Regressed
		row.Note = fmt.Sprintf("%s, more than the %s allowed",
			worseText(m.Better, worse), pct(row.Allowed))
	case better > row.Allowed:
		row.Verdict = Improved
		row.Note = "`make bench-baseline` to keep the gain"
	default:
		row.Verdict = OK
	}
	return row
}

// judge returns how much worse and how much better now is than base, each as
// a positive fraction, 0 when the change goes the other way. For a
// higher-is-better metric, worse is base/now − 1: a speed ratio from 2.0 to
// 1.8 is 11 % worse, the extra time the same work takes. A zero base makes
// any non-zero value infinitely worse or better: an allocation-free loop
// that starts allocating fails whatever the margin.
func judge(base, now float64, b Better) (worse, better float64) {
	lo, hi := base, now // lower is better: now > base is worse
	if b == Higher {
		lo, hi = now, base
	}
	switch {
	case lo == hi:
		return 0, 0
	case lo == 0:
		return math.Inf(1), 0
	case hi == 0:
		return 0, math.Inf(1)
	case hi > lo:
		return hi/lo - 1, 0
	default:
		return 0, lo/hi - 1
	}
}

// worseText says how much worse a metric got, in the terms judge measured:
// for a speed ratio, the extra time the same work takes. The change column,
// now/base − 1, understates it: −23.5 % of speed is 30.8 % more time.
func worseText(b Better, worse float64) string {
	if b == Higher {
		return fmt.Sprintf("fell: the same work takes %s more time", pct(worse))
	}
	return "grew by " + pct(worse)
}

func pct(f float64) string {
	if math.IsInf(f, 0) {
		return "∞"
	}
	return fmt.Sprintf("%.1f %%", 100*f)
}
