// Package cudacompile turns the kernel sources into a module image with NVRTC: a cubin
// for the device's own sm_XY, assembled by the toolkit's ptxas with its resource report
// of registers and spills, or PTX for the driver's JIT as a fallback. The cgo binding,
// nvrtc.go under build tag cuda, links only libnvrtc, so `make cuda-check` uses it on a
// machine without a GPU; the report parser is plain Go.
//
// gorgonia.org/cu/nvrtc has no nvrtcGetCUBIN, which is why this binding exists.
package cudacompile

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Resources is ptxas's -v report for one function: registers for an entry function,
// from "Used N registers", and the frame of every function, entry or kept out of line.
type Resources struct {
	Registers, SpillStores, SpillLoads, Stack, Lmem int
}

// Local reports a spill or any other use of local memory: for mlp_fused, its register
// fragment living in DRAM-backed memory, far beyond the kernel's budget.
func (r Resources) Local() bool {
	return r.SpillStores+r.SpillLoads+r.Stack+r.Lmem > 0
}

func (r Resources) String() string {
	return fmt.Sprintf(
		"%d registers, %d B spill stores, %d B spill loads, %d B stack frame, %d B lmem",
		r.Registers,
		r.SpillStores,
		r.SpillLoads,
		r.Stack,
		r.Lmem,
	)
}

// Report is ptxas's -v report of one module, by function name.
type Report map[string]Resources

// Local names the functions that use local memory, sorted.
func (rep Report) Local() []string {
	var out []string
	for f, r := range rep {
		if r.Local() {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

var (
	entryRe = regexp.MustCompile(`Compiling entry function '(\w+)'`)
	propsRe = regexp.MustCompile(`Function properties for (\w+)`)
	regsRe  = regexp.MustCompile(`Used (\d+) registers`)
	lmemRe  = regexp.MustCompile(`(\d+) bytes lmem`)
	frameRe = regexp.MustCompile(
		`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`,
	)
)

// ParseReport reads ptxas -v output, ptxas's own or NVRTC's program log when it was
// given --ptxas-options=-v, line by line: "Used N registers", and "N bytes lmem", which
// older ptxas versions print, belong to the last "Compiling entry function", a frame line to the
// "Function properties" line before it. ptxas lists the out-of-line device functions
// after all entries, so a section per entry would misattribute them.
func ParseReport(out string) Report {
	res := Report{}
	var entry, props string
	for _, line := range strings.Split(out, "\n") {
		if m := entryRe.FindStringSubmatch(line); m != nil {
			entry = m[1]
		}
		if m := propsRe.FindStringSubmatch(line); m != nil {
			props = m[1]
		}
		if m := regsRe.FindStringSubmatch(line); m != nil && entry != "" {
			r := res[entry]
			r.Registers = atoi(m[1])
			if l := lmemRe.FindStringSubmatch(line); l != nil {
				r.Lmem = atoi(l[1])
			}
			res[entry] = r
		}
		if m := frameRe.FindStringSubmatch(line); m != nil && props != "" {
			r := res[props]
			r.Stack = atoi(m[1])
			r.SpillStores = atoi(m[2])
			r.SpillLoads = atoi(m[3])
			res[props] = r
		}
	}
	return res
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s) // the regexps match digits only
	return n
}
