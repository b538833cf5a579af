package cudacompile

import "testing"

// The checks see only what the parser sees; this is ptxas 11.8's -v output for a kernel
// made to spill, with an out-of-line device function listed after the entries, and an
// older ptxas's lmem field, as NVRTC's log prints it (prefixed like ptxas's own).
func TestParseReport(t *testing.T) {
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
	want := Report{
		"plain":        {Registers: 8},
		"spilly":       {Registers: 32, Stack: 2464, SpillStores: 4208, SpillLoads: 4408},
		"old":          {Registers: 40, Lmem: 16},
		"_Z6helperPfi": {Stack: 24},
	}
	got := ParseReport(out)
	if len(got) != len(want) {
		t.Errorf("parsed %+v, want %+v", got, want)
	}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("%s: %+v, want %+v", f, got[f], w)
		}
		if got[f].Local() != (f != "plain") {
			t.Errorf("%s: Local() = %v", f, got[f].Local())
		}
	}
	if l := got.Local(); len(l) != 3 || l[0] != "_Z6helperPfi" || l[1] != "old" ||
		l[2] != "spilly" {
		t.Errorf("Local() = %v", l)
	}
}
