package cudacheck

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// resources is ptxas's -v report for one function: registers for an entry function
// ("Used N registers"), and the frame of every function, entry or kept out of line.
type resources struct {
	registers, spillStores, spillLoads, stack, lmem int
}

// local reports a spill or any other use of local memory.
func (r resources) local() bool {
	return r.spillStores+r.spillLoads+r.stack+r.lmem > 0
}

var (
	entryRe = regexp.MustCompile(`Compiling entry function '(\w+)'`)
	propsRe = regexp.MustCompile(`Function properties for (\w+)`)
	regsRe  = regexp.MustCompile(`Used (\d+) registers`)
	lmemRe  = regexp.MustCompile(`(\d+) bytes lmem`)
	frameRe = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
)

// parseResources reads ptxas -v output line by line: "Used N registers" (and, from
// older ptxas, "N bytes lmem") belongs to the last "Compiling entry function", a frame
// line to the "Function properties" line before it. ptxas lists the out-of-line
// device functions after all entries, so a section per entry would misattribute them.
func parseResources(out string) map[string]resources {
	res := map[string]resources{}
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
			r.registers = atoi(m[1])
			if l := lmemRe.FindStringSubmatch(line); l != nil {
				r.lmem = atoi(l[1])
			}
			res[entry] = r
		}
		if m := frameRe.FindStringSubmatch(line); m != nil && props != "" {
			r := res[props]
			r.stack, r.spillStores, r.spillLoads = atoi(m[1]), atoi(m[2]), atoi(m[3])
			res[props] = r
		}
	}
	return res
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s) // the regexps match digits only
	return n
}

// The check fails only if the parser sees what ptxas reports; this is ptxas 11.8's
// -v output for a kernel made to spill, with an out-of-line device function listed
// after the entries, and an older ptxas's lmem field.
func TestParseResources(t *testing.T) {
	out := `ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'plain' for 'sm_80'
ptxas info    : Function properties for plain
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, 360 bytes cmem[0]
ptxas info    : Compiling entry function 'spilly' for 'sm_80'
ptxas info    : Function properties for spilly
    2464 bytes stack frame, 4208 bytes spill stores, 4408 bytes spill loads
ptxas info    : Used 32 registers, 364 bytes cmem[0]
ptxas info    : Compiling entry function 'old' for 'sm_35'
ptxas info    : Used 40 registers, 16 bytes lmem, 352 bytes cmem[0]
ptxas info    : Function properties for _Z6helperPfi
    24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
`
	want := map[string]resources{
		"plain":        {registers: 8},
		"spilly":       {registers: 32, stack: 2464, spillStores: 4208, spillLoads: 4408},
		"old":          {registers: 40, lmem: 16},
		"_Z6helperPfi": {stack: 24},
	}
	got := parseResources(out)
	if len(got) != len(want) {
		t.Errorf("parsed %+v, want %+v", got, want)
	}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("%s: %+v, want %+v", f, got[f], w)
		}
		if got[f].local() != (f != "plain") {
			t.Errorf("%s: local() = %v", f, got[f].local())
		}
	}
}
