package gate

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func mem(name string, v ...float64) Metric {
	return Metric{
		Workload: "w",
		Name:     name,
		Unit:     "MiB",
		Kind:     Memory,
		Better:   Lower,
		Values:   v,
	}
}

func speed(name string, v ...float64) Metric {
	return Metric{
		Workload: "w",
		Name:     name,
		Unit:     "×",
		Kind:     Speed,
		Better:   Higher,
		Values:   v,
	}
}

func only(t *testing.T, r Report) Row {
	t.Helper()
	if len(r.Rows) != 1 {
		t.Fatalf("%d rows, want 1: %+v", len(r.Rows), r.Rows)
	}
	return r.Rows[0]
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMedianAndNoise(t *testing.T) {
	for _, c := range []struct {
		v             []float64
		median, noise float64
	}{
		{nil, 0, 0},
		{[]float64{5}, 5, 0},
		{[]float64{2, 2, 2}, 2, 0},
		// odd count: the middle one; 1 and 3 lie 50 % away
		{[]float64{1, 3, 2}, 2, 0.5},
		// even count: the mean of the middle two; 1 lies 1.5/2.5 away
		{[]float64{4, 1, 2, 3}, 2.5, 0.6},
		// five or more: the farthest is left out, as the median leaves it out
		{[]float64{100, 101, 97, 100, 130}, 100, 0.03},
		// fewer than five: every repetition counts
		{[]float64{100, 130, 100, 97}, 100, 0.3},
		// zero median: no relative spread
		{[]float64{0, 0, 1}, 0, 0},
	} {
		m := mem("x", c.v...)
		if !near(m.Median(), c.median) || !near(m.Noise(), c.noise) {
			t.Errorf("%v: median %g noise %g, want %g and %g",
				c.v, m.Median(), m.Noise(), c.median, c.noise)
		}
	}
}

// The threshold is the margin plus the larger noise of the two runs; only a
// change for the worse beyond it fails.
func TestThresholdIsMarginPlusLargerNoise(t *testing.T) {
	base := []Metric{mem("rss", 100, 98, 102)} // noise 2 %
	for _, c := range []struct {
		now          []float64
		want         Verdict
		allowed      float64
		change       float64
		noteContains string
	}{
		{[]float64{108.9}, OK, 0.09, 0.089, ""},                     // +8.9 % < 7 % + 2 %
		{[]float64{109.1}, Regressed, 0.09, 0.091, "grew by 9.1 %"}, // just beyond
		// its own noise (100 lies 12/112 from 112) widens the band
		{[]float64{112, 100, 118}, OK, 0.07 + 12.0/112, 0.12, ""},
		{[]float64{91}, Improved, 0.09, -0.09, "bench-baseline"}, // 100/91 − 1 = 9.9 % better
		{[]float64{92}, OK, 0.09, -0.08, ""},                     // 8.7 % better: within the band
	} {
		r := only(t, Compare(base, []Metric{mem("rss", c.now...)}, Options{}))
		if r.Verdict != c.want ||
			!near(r.Allowed, c.allowed) ||
			!near(r.Change, c.change) ||
			!strings.Contains(r.Note, c.noteContains) {
			t.Errorf("now %v: %+v, want verdict %s allowed %g change %g note ~%q",
				c.now, r, c.want, c.allowed, c.change, c.noteContains)
		}
		if r.Verdict.Fails() != (c.want == Regressed) {
			t.Errorf("now %v: Fails() = %v", c.now, r.Verdict.Fails())
		}
	}
}

// For a higher-is-better ratio the loss is measured as the extra time the
// same work takes: 2.0 → 1.85 is 8.1 % worse, beyond 7 %.
func TestHigherIsBetterMeasuresTheSlowdown(t *testing.T) {
	base := []Metric{speed("vs numpy", 2.0)}
	if r := only(t, Compare(base, []Metric{speed("vs numpy", 1.87)}, Options{})); r.Verdict != OK {
		t.Errorf("2.0 → 1.87 (7.0 %% slower): %+v", r)
	}
	r := only(t, Compare(base, []Metric{speed("vs numpy", 1.85)}, Options{}))
	if r.Verdict != Regressed ||
		!strings.Contains(r.Note, "takes 8.1 % more time") ||
		!near(r.Change, -0.075) {
		t.Errorf("2.0 → 1.85: %+v", r)
	}
	r = only(t, Compare(base, []Metric{speed("vs numpy", 2.2)}, Options{}))
	if r.Verdict != Improved {
		t.Errorf("2.0 → 2.2: %+v", r)
	}
}

// SpeedMargin widens the gate for file-compared speed ratios only: memory
// keeps the margin, and an in-run A/B ratio needs no allowance for another
// machine since both builds ran on this one.
func TestSpeedMarginAppliesToFileComparedSpeedOnly(t *testing.T) {
	o := Options{SpeedMargin: 0.35}
	inRun := Metric{
		Workload: "w",
		Name:     "vs base",
		Kind:     Speed,
		Better:   Higher,
		InRun:    true,
	}
	base := []Metric{speed("vs numpy", 2.0), mem("rss", 100), inRun}
	inRun.Values = []float64{0.9}
	run := []Metric{speed("vs numpy", 1.6), mem("rss", 110), inRun}
	got := map[string]Verdict{}
	for _, r := range Compare(base, run, o).Rows {
		got[r.Name] = r.Verdict
	}
	want := map[string]Verdict{"vs numpy": OK, "rss": Regressed, "vs base": Regressed}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
}

// MemoryMargin widens the gate for memory only: a peak a third higher (a
// collector running late under load) passes, a doubled one (a row kept per
// MLP) and a speed loss still fail.
func TestMemoryMarginAppliesToMemoryOnly(t *testing.T) {
	o := Options{MemoryMargin: 0.5}
	base := []Metric{speed("vs numpy", 2.0), mem("late gc", 169), mem("kept rows", 169)}
	run := []Metric{speed("vs numpy", 1.6), mem("late gc", 225), mem("kept rows", 340)}
	got := map[string]Verdict{}
	for _, r := range Compare(base, run, o).Rows {
		got[r.Name] = r.Verdict
	}
	want := map[string]Verdict{"vs numpy": Regressed, "late gc": OK, "kept rows": Regressed}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
}

// An in-run ratio is compared with 1 (the reference build beside it); the
// baseline's A/A repetitions only lend their noise.
func TestInRunRatioAgainstOneWithBaselineNoise(t *testing.T) {
	ab := func(v ...float64) Metric {
		return Metric{
			Workload: "w",
			Name:     "vs base",
			Unit:     "×",
			Kind:     Speed,
			Better:   Higher,
			InRun:    true,
			Values:   v,
		}
	}
	base := []Metric{ab(1.00, 0.97, 1.04)} // an A/A run: 4 % noise
	// 1/0.90 − 1 = 11.1 % slower, beyond 7 % + 4 %.
	r := only(t, Compare(base, []Metric{ab(0.90, 0.90, 0.90)}, Options{}))
	if r.Base != 1 || !near(r.Allowed, 0.11) || r.Verdict != Regressed {
		t.Errorf("A/B 0.90 against A/A noise 4 %%: %+v", r)
	}
	if r := only(t, Compare(base, []Metric{ab(0.91)}, Options{})); r.Verdict != OK {
		t.Errorf("A/B 0.91 (9.9 %% slower) within 11 %%: %+v", r)
	}
	// Without a baseline entry the in-run ratio still gates, on its own noise.
	r = only(t, Compare(nil, []Metric{ab(0.8, 0.8)}, Options{}))
	if r.Verdict != Regressed || r.Base != 1 {
		t.Errorf("A/B 0.8 without baseline entry: %+v", r)
	}
}

func TestMissingNewAndFailedMetrics(t *testing.T) {
	base := []Metric{mem("kept", 1), mem("dropped", 1), mem("not run", 1)}
	run := []Metric{
		mem("kept", 1),
		mem("added", 5),
		{Workload: "w", Name: "broken", Err: "peer: numpy missing"},
	}
	sel := func(m Metric) bool { return m.Name != "not run" }
	rep := Compare(base, run, Options{Selected: sel})
	got := map[string]Verdict{}
	for _, r := range rep.Rows {
		got[r.Name] = r.Verdict
	}
	want := map[string]Verdict{"kept": OK, "added": New, "broken": Failed, "dropped": Missing}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	if !rep.Failed() {
		t.Error("a failed and a missing metric must fail the gate")
	}
	if Compare(base[:1], run[:2], Options{}).Failed() {
		t.Error("a new metric must not fail the gate")
	}
}

// A zero baseline admits no growth: an allocation-free loop stays so.
func TestZeroBaseline(t *testing.T) {
	base := []Metric{mem("allocs", 0, 0)}
	r := only(t, Compare(base, []Metric{mem("allocs", 0)}, Options{}))
	if r.Verdict != OK || r.Change != 0 {
		t.Errorf("0 → 0: %+v", r)
	}
	r = only(t, Compare(base, []Metric{mem("allocs", 0.001)}, Options{}))
	if r.Verdict != Regressed {
		t.Errorf("0 → 0.001: %+v", r)
	}
	r = only(t, Compare([]Metric{mem("allocs", 3)}, []Metric{mem("allocs", 0)}, Options{}))
	if r.Verdict != Improved {
		t.Errorf("3 → 0: %+v", r)
	}
}

// A count near 0 moves by large fractions of itself (a stray runtime
// buffer); below its Floor, in the metric's unit, a change is neither a
// regression nor a gain, and above it the relative rule applies again.
func TestFloorAbsorbsSmallAbsoluteChanges(t *testing.T) {
	heap := func(v ...float64) Metric {
		return Metric{
			Workload: "w",
			Name:     "heap",
			Unit:     "B per sample",
			Kind:     Work,
			Better:   Lower,
			Values:   v,
			Floor:    1,
		}
	}
	for _, c := range []struct {
		base, now float64
		want      Verdict
	}{
		{0.1, 0.9, OK},        // +800 %, but 0.8 B per sample
		{0, 0.5, OK},          // from nothing, still within a byte
		{1.2, 0.3, OK},        // the other way too: no "improved" below the floor
		{0.1, 1.5, Regressed}, // 1.4 B per sample
		{386, 2.5, Improved},  // the pad per block gone
		{2.5, 386, Regressed}, // and back
		{2.47, 2.48, OK},      // as without a floor
	} {
		r := only(t, Compare([]Metric{heap(c.base)}, []Metric{heap(c.now)}, Options{}))
		if r.Verdict != c.want {
			t.Errorf("%g → %g: %s, want %s", c.base, c.now, r.Verdict, c.want)
		}
	}
	// The table says why a change beyond the relative allowance passed.
	r := only(t, Compare([]Metric{heap(0.1)}, []Metric{heap(0.9)}, Options{}))
	want := "changed by 0.8 B per sample, within the 1 B per sample below which this count is noise"
	if r.Note != want {
		t.Errorf("note %q, want %q", r.Note, want)
	}
}

// A ratio to the numpy peer names what the peer ran on beside it, and says so
// when the baseline's peer ran on another BLAS or core.
func TestTableNamesThePeerBesideItsRatio(t *testing.T) {
	ratio := func(peer string, v float64) Metric {
		m := speed("speed vs numpy peer", v)
		m.Peer = peer
		return m
	}
	coop := "OpenBLAS 0.3.21, core Cooperlake (threadpoolctl)"
	haswell := "OpenBLAS 0.3.21, core Haswell (threadpoolctl)"
	var b bytes.Buffer
	Compare([]Metric{ratio(coop, 1.2)}, []Metric{ratio(coop, 1.21)}, Options{}).Write(&b)
	Compare([]Metric{ratio(haswell, 1.2)}, []Metric{ratio(coop, 1.21)}, Options{}).Write(&b)
	out := b.String()
	for _, want := range []string{
		"| speed vs numpy peer (×), peer on " + coop,
		"1. w / speed vs numpy peer: the baseline's peer ran on " + haswell,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "the baseline's peer ran on") != 1 {
		t.Errorf("a note for a peer that did not change:\n%s", out)
	}
}

func TestTableAndNotes(t *testing.T) {
	failed := Metric{
		Workload: "w",
		Name:     "x",
		Unit:     "MiB",
		Err:      "boom",
	}
	run := []Metric{mem("rss", 120), failed, mem("fresh", 3)}
	rep := Compare([]Metric{mem("rss", 100)}, run, Options{})
	var b bytes.Buffer
	rep.Write(&b)
	out := b.String()
	for _, want := range []string{
		"| workload", "| rss (MiB)", "| 100 ", "| 120 ", "| +20.0 %", "| 7.0 %", "| REGRESSED (1)",
		"| FAILED (2)", "1. w / rss: grew by 20.0 %", "2. w / x: boom",
		"| new ", "new: not in the baseline",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestSaveLoadMerge(t *testing.T) {
	p := filepath.Join(t.TempDir(), "baseline.json")
	b := Baseline{
		Class:   zen4,
		Machine: "m",
		Commit:  "c",
		Date:    "d",
		Metrics: []Metric{mem("a", 1, 2.0711159), speed("b", 3)},
	}
	other := Baseline{
		Class:   xeon,
		Machine: "x",
		Commit:  "c2",
		Date:    "d2",
		Note:    "n",
		Metrics: []Metric{mem("a", 4)},
	}
	if err := Save(p, File{Baselines: []Baseline{b, other}}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	b.Metrics[0].Values[1] = 2.071 // the file keeps four significant digits
	if want := (File{Baselines: []Baseline{b, other}}); !reflect.DeepEqual(got, want) {
		t.Errorf("loaded %+v, want %+v", got, want)
	}
	merged := Merge(b.Metrics, []Metric{speed("b", 4), mem("c", 5)})
	if !reflect.DeepEqual(merged, []Metric{mem("a", 1, 2.071), speed("b", 4), mem("c", 5)}) {
		t.Errorf("merged %+v", merged)
	}
	_, err = Load(filepath.Join(t.TempDir(), "none.json"))
	if err == nil || !strings.Contains(err.Error(), "make bench-baseline") {
		t.Errorf("missing file: %v", err)
	}
	for _, broken := range []string{"{", `{"baseline": []}`} {
		if err := os.WriteFile(p, []byte(broken), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(p); err == nil {
			t.Errorf("%s must not load", broken)
		}
	}
}

// Put writes only the entry of the class it records: the other classes'
// entries stay as they were, and a class without one gets a new entry.
func TestPutReplacesOnlyItsClass(t *testing.T) {
	f := File{Baselines: []Baseline{{Class: xeon, Commit: "x1"}, {Class: zen4, Commit: "z1"}}}
	f.Put(Baseline{Class: zen4, Commit: "z2"})
	f.Put(Baseline{Class: avx2Host, Commit: "a1"})
	var got []string
	for _, b := range f.Baselines {
		got = append(got, b.Commit)
	}
	if want := []string{"x1", "z2", "a1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("entries %v, want %v", got, want)
	}
}

// The one-entry layout from before classes reads as one entry whose class
// comes from its machine line, without a family: it gates no host's
// CPU-dependent metrics, even a host whose machine line is the same.
func TestLoadOneEntryLayout(t *testing.T) {
	p := filepath.Join(t.TempDir(), "baseline.json")
	line := "AMD EPYC, 2 CPUs, 24 GiB, linux/amd64, forward kernel avx512f, numpy 1.24.2"
	if err := os.WriteFile(p, []byte(`{"machine":"`+line+`","commit":"3e27","date":"2026-11-23",
"metrics": [
  {"workload":"w","name":"rss","unit":"MiB","kind":"memory","better":"lower","values":[100]}
]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Class{
		Vendor:    "AuthenticAMD",
		ModelName: "AMD EPYC",
		Kernel:    "avx512f",
		CPUs:      2,
	}
	if len(f.Baselines) != 1 ||
		f.Baselines[0].Class != want ||
		f.Baselines[0].Machine != line ||
		f.Baselines[0].Note == "" ||
		len(f.Baselines[0].Metrics) != 1 {
		t.Fatalf("loaded %+v, want one entry of class %+v", f, want)
	}
	if r := f.Refs(zen4); r.Same != nil || len(r.Order) != 1 {
		t.Errorf("refs of a Zen 4 host: %+v", r)
	}
}
