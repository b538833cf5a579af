package gate

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// Three machine classes: the Intel Xeon with two 512-bit FMA ports, the Zen 4
// EPYC that runs AVX-512 on 256-bit pipes, and an AVX2-only x86 host.
var (
	xeon = Class{
		Vendor:    "GenuineIntel",
		Family:    6,
		Model:     143,
		ModelName: "Intel(R) Xeon(R) Processor",
		Kernel:    "avx512f",
		CPUs:      2,
	}
	zen4 = Class{
		Vendor:    "AuthenticAMD",
		Family:    25,
		Model:     17,
		ModelName: "AMD EPYC",
		Kernel:    "avx512f",
		CPUs:      2,
	}
	avx2Host = Class{
		Vendor:    "GenuineIntel",
		Family:    6,
		Model:     79,
		ModelName: "Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz",
		Kernel:    "avx2-fma",
		CPUs:      2,
	}
)

func TestClassSame(t *testing.T) {
	armN1 := Class{
		Vendor:    "ARM",
		ModelName: "n1",
		Kernel:    "generic",
		CPUs:      2,
	}
	armNoName := Class{Vendor: "ARM", Kernel: "generic", CPUs: 2}
	with := func(f func(c *Class)) Class {
		c := zen4
		f(&c)
		return c
	}
	for _, c := range []struct {
		name string
		a, b Class
		want bool
	}{
		{"identical", zen4, zen4, true},
		{"model name differs, family and model agree", zen4,
			with(func(c *Class) { c.ModelName = "AMD EPYC 9454 48-Core Processor" }), true},
		{"another vendor", zen4, xeon, false},
		{"another model of the family", zen4, with(func(c *Class) { c.Model = 1 }), false},
		{"Zen 5 under the same masked name", zen4, with(func(c *Class) { c.Family = 26 }), false},
		{"the AVX2 kernel forced on the same CPU", zen4,
			with(func(c *Class) { c.Kernel = "avx2-fma" }), false},
		{"another CPU count", zen4, with(func(c *Class) { c.CPUs = 4 }), false},
		{"family not recorded on one side", zen4,
			with(func(c *Class) { c.Family = 0; c.Model = 0 }), false},
		{"no family on either side: the model name decides", armN1, armN1, true},
		{"no family and no model name", armNoName, armNoName, false},
		{"no vendor", Class{}, Class{}, false},
	} {
		if got := c.a.Same(c.b); got != c.want || c.b.Same(c.a) != got {
			t.Errorf("%s: Same = %v, want %v (both ways)", c.name, got, c.want)
		}
	}
	want := "AMD family 25 model 17 (AMD EPYC), kernel avx512f, 2 CPUs"
	if got := zen4.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// engineRun is one engine workload as the suite reports it: the ratio to the
// numpy peer (CPU-dependent), the A/B ratio, peak RSS and allocations.
func engineRun(numpy, ab, rss, heap float64) []Metric {
	return []Metric{
		{Workload: "engine", Name: "speed vs numpy peer", Unit: "×",
			Kind: Speed, Better: Higher, Values: []float64{numpy}},
		{Workload: "engine", Name: "speed vs baseline build", Unit: "×",
			Kind: Speed, Better: Higher, InRun: true, Values: []float64{ab}},
		{Workload: "engine", Name: "peak RSS", Unit: "MiB",
			Kind: Memory, Better: Lower, Values: []float64{rss}},
		{Workload: "engine", Name: "heap allocated", Unit: "B per sample",
			Kind: Work, Better: Lower, Values: []float64{heap}},
		{Workload: "bake", Name: "S3 requests", Unit: "per slice",
			Kind: Work, Better: Lower, Values: []float64{41.5}},
	}
}

// The file as the issue leaves it: the Xeon's entry and, recorded later, the
// Zen 4 EPYC's; the numpy ratio is 2.0 on the Xeon and 1.3 on Zen 4.
func twoClasses() File {
	return File{Baselines: []Baseline{
		{Class: xeon, Date: "2026-11-23", Metrics: engineRun(2.0, 1, 30, 386.5)},
		{Class: zen4, Date: "2026-11-24T22:00:00Z", Metrics: engineRun(1.3, 1, 31, 386.5)},
	}}
}

func verdicts(r Report) map[string]Verdict {
	out := map[string]Verdict{}
	for _, row := range r.Rows {
		out[row.Workload+" / "+row.Name] = row.Verdict
	}
	return out
}

// Refs: the same-class entry gates the CPU-dependent metrics; the others are
// compared with the entries of this kernel first, then the rest, newest first.
func TestRefsPicksTheClassAndTheNewestEntryOfTheKernel(t *testing.T) {
	f := twoClasses()
	for _, c := range []struct {
		name  string
		class Class
		same  string
		order []string
	}{
		{"Xeon", xeon, "GenuineIntel", []string{"AuthenticAMD", "GenuineIntel"}},
		{"Zen 4", zen4, "AuthenticAMD", []string{"AuthenticAMD", "GenuineIntel"}},
		{"AVX2-only host", avx2Host, "", []string{"AuthenticAMD", "GenuineIntel"}},
	} {
		r := f.Refs(c.class)
		same := ""
		if r.Same != nil {
			same = r.Same.Class.Vendor
		}
		var order []string
		for _, b := range r.Order {
			order = append(order, b.Class.Vendor)
		}
		if same != c.same || !reflect.DeepEqual(order, c.order) {
			t.Errorf("%s: same %q order %v, want %q %v", c.name, same, order, c.same, c.order)
		}
	}
	// An AVX2 entry, even the newest, comes after the AVX-512 ones for an
	// AVX-512 host, and first for an AVX2 host.
	f.Baselines = append(f.Baselines, Baseline{Class: avx2Host, Date: "2026-11-25T08:00:00Z"})
	if r := f.Refs(zen4); r.Order[2].Class != avx2Host {
		t.Errorf("Zen 4 order starts %v", r.Order[0].Class)
	}
	if r := f.Refs(avx2Host); r.Order[0].Class != avx2Host || r.Same == nil {
		t.Errorf("AVX2 host: %+v", r)
	}
}

// On a class without a baseline (the AVX2-only host) the ratio to the numpy
// peer is printed, not gated, however far it is from the other classes'; the
// A/B ratio, peak RSS and the work counts still fail on a real regression.
func TestAnotherClassNeverFailsTheCPUDependentRows(t *testing.T) {
	f := twoClasses()
	o := Options{OtherClassMemoryMargin: 0.5}
	unchanged := f.Refs(avx2Host).Compare(engineRun(0.9, 1, 36, 2), o)
	want := map[string]Verdict{
		"engine / speed vs numpy peer":     NotGated,
		"engine / speed vs baseline build": OK,
		"engine / peak RSS":                OK,
		"engine / heap allocated":          Improved, // AVX2's 4-row blocks leave no padded tail
		"bake / S3 requests":               OK,
	}
	if got := verdicts(unchanged); !reflect.DeepEqual(got, want) || unchanged.Failed() {
		t.Errorf("unchanged tree on the AVX2 host: %v, want %v", got, want)
	}
	var b bytes.Buffer
	unchanged.Write(&b)
	for _, s := range []string{
		"| recorded, not gated",
		"recorded, not gated: no baseline for Intel family 6 model 79 " +
			"(Intel(R) Xeon(R) CPU E5-2686 v4 @ 2.30GHz), kernel avx2-fma, 2 CPUs",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, b.String())
		}
	}
	if row := unchanged.Rows[0]; row.Now != 0.9 || !isNaN(row.Base) {
		t.Errorf("the not-gated row must show its figure and no baseline: %+v", row)
	}

	// A slowed, bloated build on the AVX2 host: the numpy ratio collapses and
	// is still not gated, but A/B, memory and work counts fail.
	bad := f.Refs(avx2Host).Compare([]Metric{
		engineRun(0.2, 0.7, 80, 2)[0], engineRun(0.2, 0.7, 80, 2)[1], engineRun(0.2, 0.7, 80, 2)[2],
		engineRun(0.2, 0.7, 80, 500)[3],
		{Workload: "bake", Name: "S3 requests", Unit: "per slice",
			Kind: Work, Better: Lower, Values: []float64{49}},
	}, o)
	want = map[string]Verdict{
		"engine / speed vs numpy peer":     NotGated,
		"engine / speed vs baseline build": Regressed,
		"engine / peak RSS":                Regressed,
		"engine / heap allocated":          Regressed,
		"bake / S3 requests":               Regressed,
	}
	if got := verdicts(bad); !reflect.DeepEqual(got, want) || !bad.Failed() {
		t.Errorf("regressed build on the AVX2 host: %v, want %v", got, want)
	}
}

// Every class passes the unchanged tree against the file, and on its own
// class a collapsed numpy ratio fails: the Xeon's 2.0 would fail Zen 4's 1.3
// if it were compared, and it is not.
func TestEachClassAgainstItsOwnRatio(t *testing.T) {
	f := twoClasses()
	for _, c := range []struct {
		class Class
		numpy float64
	}{{xeon, 2.0}, {zen4, 1.3}} {
		r := f.Refs(c.class).Compare(engineRun(c.numpy, 1, 31, 386.5), Options{})
		if r.Failed() {
			t.Errorf("%s unchanged: %v", c.class, verdicts(r))
		}
		r = f.Refs(c.class).Compare(engineRun(c.numpy*0.7, 1, 31, 386.5), Options{})
		if got := verdicts(r)["engine / speed vs numpy peer"]; got != Regressed {
			t.Errorf("%s at 70 %% of its ratio: %s", c.class, got)
		}
	}
	// A run on Zen 4 with the Xeon's entry alone: its 1.3 is not compared
	// with the Xeon's 2.0.
	xeonOnly := File{Baselines: f.Baselines[:1]}
	r := xeonOnly.Refs(zen4).Compare(engineRun(1.3, 1, 31, 386.5), Options{})
	if r.Failed() || verdicts(r)["engine / speed vs numpy peer"] != NotGated {
		t.Errorf("Zen 4 against the Xeon's entry: %v", verdicts(r))
	}
}

// Peak RSS against another class's entry is gated within the CI allowance
// (OtherClassMemoryMargin), against its own class's with the margin.
func TestOtherClassMemoryMargin(t *testing.T) {
	f := File{Baselines: []Baseline{
		{Class: xeon, Date: "2026-11-23", Metrics: []Metric{mem("rss", 100)}},
	}}
	o := Options{OtherClassMemoryMargin: 0.5}
	rss := func(host Class, mib float64) Verdict {
		return verdicts(f.Refs(host).Compare([]Metric{mem("rss", mib)}, o))["w / rss"]
	}
	if got := rss(zen4, 133); got != OK {
		t.Errorf("+33 %% against another class: %s", got)
	}
	if got := rss(zen4, 200); got != Regressed {
		t.Errorf("+100 %% against another class: %s", got)
	}
	if got := rss(xeon, 133); got != Regressed {
		t.Errorf("+33 %% against its own class: %s", got)
	}
}

// A metric the newest entry lacks (an entry recorded with ONLY=) is compared
// with the next entry that has it; MISSING is judged against the newest entry
// (and, for the CPU-dependent metrics, this class's), so a metric an older
// entry still lists does not fail once the suite dropped it.
func TestFallbackAndMissing(t *testing.T) {
	f := File{Baselines: []Baseline{
		{Class: xeon, Date: "2026-11-23", Metrics: []Metric{
			mem("a", 10), mem("dropped long ago", 1), speed("vs numpy", 2),
		}},
		{Class: zen4, Date: "2026-11-24T10:00:00Z", Metrics: []Metric{
			mem("b", 5), mem("dropped", 1), speed("vs numpy", 1.3),
		}},
	}}
	r := f.Refs(zen4).Compare([]Metric{mem("a", 20), mem("b", 5)}, Options{})
	want := map[string]Verdict{
		"w / a":        Regressed,
		"w / b":        OK,
		"w / dropped":  Missing,
		"w / vs numpy": Missing,
	}
	if got := verdicts(r); !reflect.DeepEqual(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	if r.Rows[0].Against != xeon.String() || r.Rows[1].Against != "" {
		t.Errorf("Against: %q, %q", r.Rows[0].Against, r.Rows[1].Against)
	}
	// On the AVX2 host nothing CPU-dependent can be missing.
	run := []Metric{mem("a", 10), mem("b", 5), mem("dropped", 1)}
	if got := verdicts(f.Refs(avx2Host).Compare(run, Options{})); got["w / vs numpy"] != "" {
		t.Errorf("AVX2 host: %v", got)
	}
}

func isNaN(f float64) bool { return f != f }
