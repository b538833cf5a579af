package gate

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Class is a machine class: what the engines' ratio to the numpy peer depends
// on. Ours and OpenBLAS's kernels use the vector units differently on an Intel
// Xeon with two 512-bit FMA ports, a Zen 4 EPYC that runs AVX-512 on 256-bit
// pipes and an AVX2-only host, so the ratio is a property of the CPU, not of the
// code, and it is gated only against a baseline of the same class.
type Class struct {
	// Vendor is /proc/cpuinfo's vendor_id: GenuineIntel, AuthenticAMD.
	Vendor string `json:"vendor"`
	// Family and Model are the x86 family and model: the microarchitecture.
	// Family 0 means not recorded or not x86; see Same.
	Family int `json:"family"`
	Model  int `json:"model"`
	// ModelName is informational: hypervisors mask it, to "AMD EPYC" for
	// every EPYC generation under KVM, so it identifies nothing where a
	// family is known.
	ModelName string `json:"model_name"`
	// Kernel is the forward kernel the engines chose, avx512f, avx2-fma or
	// generic: the CPU's best, or the cap of WHESTBAKE_CPU_KERNEL.
	Kernel string `json:"kernel"`
	// CPUs is the number of logical CPUs the gate may use.
	CPUs int `json:"cpus"`
}

// Same reports whether c and o are one class: same vendor, kernel and CPU
// count, and the same family and model. Where neither records a family, on a
// host that is not x86, the model names must match instead; where only one
// does, or the vendor is unknown, they are not the same class: a class that
// cannot be told apart from another must not gate a CPU-dependent figure.
func (c Class) Same(o Class) bool {
	if c.Vendor == "" || c.Vendor != o.Vendor || c.Kernel != o.Kernel || c.CPUs != o.CPUs {
		return false
	}
	switch {
	case c.Family != 0 && o.Family != 0:
		return c.Family == o.Family && c.Model == o.Model
	case c.Family == 0 && o.Family == 0:
		return c.ModelName != "" && c.ModelName == o.ModelName
	}
	return false
}

// String names the class in the gate's output, e.g.
// "AMD family 25 model 17 (AMD EPYC), kernel avx512f, 2 CPUs".
func (c Class) String() string {
	vendor := map[string]string{
		"GenuineIntel": "Intel",
		"AuthenticAMD": "AMD",
		"":             "unknown vendor",
	}[c.Vendor]
	if vendor == "" {
		vendor = c.Vendor
	}
	arch := fmt.Sprintf(" family %d model %d", c.Family, c.Model)
	if c.Family == 0 {
		arch = ", family and model not recorded"
	}
	name := ""
	if c.ModelName != "" {
		name = " (" + c.ModelName + ")"
	}
	kernel := cmp.Or(c.Kernel, "unknown")
	return fmt.Sprintf("%s%s%s, kernel %s, %d CPUs", vendor, arch, name, kernel, c.CPUs)
}

// classOfMachineLine is the class a baseline file of the one-entry layout,
// which records no class, can be given from its machine line,
// "<model name>, <n> CPUs, <memory>, <os/arch>, forward kernel <kernel>, numpy <v>":
// no family or model, so Same never finds it the class of a host.
func classOfMachineLine(line string) Class {
	var c Class
	if m := regexp.MustCompile(`^(.*), (\d+) CPUs, `).FindStringSubmatch(line); m != nil {
		c.ModelName = m[1]
		c.CPUs, _ = strconv.Atoi(m[2])
	}
	if m := regexp.MustCompile(`forward kernel ([^,]+)`).FindStringSubmatch(line); m != nil {
		c.Kernel = m[1]
	}
	switch {
	case strings.Contains(c.ModelName, "AMD"):
		c.Vendor = "AuthenticAMD"
	case strings.Contains(c.ModelName, "Intel"):
		c.Vendor = "GenuineIntel"
	}
	return c
}

// DependsOnCPU reports whether a metric's value is a property of the CPU
// rather than of the code: a throughput ratio to a peer measured beside it,
// the numpy peer, whose OpenBLAS kernels use the CPU differently from ours.
// Such a metric is gated only against a baseline of the same class. The
// in-run A/B ratio of both builds of our code on the machine at hand, memory
// and work counts are gated on every machine.
func (m Metric) DependsOnCPU() bool { return m.Kind == Speed && !m.InRun }

// Refs is what a run on one class is compared with, picked from the entries
// of a baseline file.
type Refs struct {
	// Class is the class of the machine the run is on.
	Class Class
	// Same is the entry of that class; nil when the file has none, and then
	// the CPU-dependent metrics are recorded, not gated.
	Same *Baseline
	// Order lists the entries for the metrics that do not depend on the CPU,
	// preferred first: those of this class's forward kernel, then the others,
	// each newest first. A metric is compared with the first entry that
	// recorded it. Newest first, so that an intended change accepted on one
	// class by `make bench-baseline` there holds on every class; the kernel
	// first, since the kernel's register blocking shows in the engines' heap
	// bytes per sample: AVX-512's 6-row blocks leave a padded tail where
	// AVX2's 4-row blocks leave none.
	Order []*Baseline
}

// Refs picks what a run on class c is compared with.
func (f *File) Refs(c Class) Refs {
	r := Refs{Class: c}
	for i := range f.Baselines {
		b := &f.Baselines[i]
		if r.Same == nil && b.Class.Same(c) {
			r.Same = b
		}
		r.Order = append(r.Order, b)
	}
	slices.SortStableFunc(r.Order, func(a, b *Baseline) int {
		ak, bk := a.Class.Kernel == c.Kernel, b.Class.Kernel == c.Kernel
		if ak != bk {
			if ak {
				return -1
			}
			return 1
		}
		return recorded(b).Compare(recorded(a)) // newest first
	})
	return r
}

// recorded is when an entry was recorded: Date is RFC 3339, or a date alone
// in entries recorded in the one-entry layout; an unreadable one sorts as oldest.
func recorded(b *Baseline) time.Time {
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, b.Date); err == nil {
			return t
		}
	}
	return time.Time{}
}

// Compare compares run metric by metric: a CPU-dependent metric with this
// class's entry, NotGated without one, any other with the first entry of
// Order that recorded it. A metric is Missing when the entry that gates its
// kind, Same for the CPU-dependent ones and Order[0] for the others, has it and
// the run, having selected it, does not. OtherClassMemoryMargin, when
// positive, is the least margin of a memory metric compared with another
// class's entry.
func (r Refs) Compare(run []Metric, o Options) Report {
	if o.Margin == 0 {
		o.Margin = DefaultMargin
	}
	find := func(b *Baseline, key string) (Metric, bool) {
		if b == nil {
			return Metric{}, false
		}
		for _, m := range b.Metrics {
			if m.Key() == key {
				return m, true
			}
		}
		return Metric{}, false
	}
	rep := Report{Class: r.Class}
	seen := map[string]bool{}
	for _, m := range run {
		seen[m.Key()] = true
		switch {
		case m.Err != "":
			rep.Rows = append(rep.Rows, compareOne(Metric{}, false, m, o))
		case m.DependsOnCPU() && r.Same == nil:
			rep.Rows = append(rep.Rows, Row{
				Workload: m.Workload,
				Name:     m.Name,
				Unit:     m.Unit,
				Base:     math.NaN(),
				Now:      m.Median(),
				Change:   math.NaN(),
				Verdict:  NotGated,
				Peer:     m.Peer,
			})
		case m.DependsOnCPU():
			b, ok := find(r.Same, m.Key())
			rep.Rows = append(rep.Rows, compareOne(b, ok, m, o))
		default:
			var (
				b    Metric
				ok   bool
				from *Baseline
			)
			for _, e := range r.Order {
				if b, ok = find(e, m.Key()); ok {
					from = e
					break
				}
			}
			oo := o
			if m.Kind == Memory && from != nil && !from.Class.Same(r.Class) {
				oo.MemoryMargin = max(o.MemoryMargin, o.OtherClassMemoryMargin)
			}
			row := compareOne(b, ok, m, oo)
			if from != nil && len(r.Order) > 1 && from != r.Order[0] {
				row.Against = from.Class.String()
			}
			rep.Rows = append(rep.Rows, row)
		}
	}
	missing := func(b *Baseline, cpu bool) {
		if b == nil {
			return
		}
		for _, m := range b.Metrics {
			if m.DependsOnCPU() != cpu ||
				seen[m.Key()] ||
				(o.Selected != nil && !o.Selected(m)) {
				continue
			}
			seen[m.Key()] = true
			rep.Rows = append(rep.Rows, missingRow(m))
		}
	}
	missing(r.Same, true)
	if len(r.Order) > 0 {
		missing(r.Order[0], false)
	}
	return rep
}
