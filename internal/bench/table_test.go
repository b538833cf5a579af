package bench

import (
	"errors"
	"strings"
	"testing"
)

// tableLines renders results and returns the table's lines with runs of spaces
// collapsed, so the expectations below read as markdown.
func tableLines(t *testing.T, results []Result, peak float64) []string {
	t.Helper()
	var b strings.Builder
	Table(&b, results, peak)
	var out []string
	for _, l := range strings.Split(strings.TrimRight(b.String(), "\n"), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}

func checkLines(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

// The CPU-only table keeps docs/benchmarks.md's columns, the ratio's header
// naming what the peer ran. Values by hand: 1e6 samples in 2 s is
// 500000/s, 2000 ms per 1e6, 2·256²·8·5e5 = 524.288 GFLOP/s, twice the peer's.
func TestTableCPUKeepsTheDocumentedColumns(t *testing.T) {
	cfg := Config{Width: 256, Depth: 8, NSamples: 1_000_000}
	ranOn := "whestbench 0.16.2, OpenBLAS 0.3.31, core SkylakeX (threadpoolctl)"
	got := tableLines(t, []Result{
		{Impl: "whestbake philox (CPU twin)", Config: cfg, Device: "cpu", Seconds: 2},
		{
			Impl:    "whestbench create_dataset (numpy)",
			Config:  cfg,
			Device:  "cpu",
			Peer:    PeerNumpy,
			Seconds: 4,
			RanOn:   ranOn,
		},
	}, 66.9)
	checkLines(t, got, []string{
		"| configuration | implementation | samples/s | ms per 1e6 samples | GFLOP/s " +
			"| vs numpy peer (whestbench 0.16.2, OpenBLAS 0.3.31, core SkylakeX (threadpoolctl)) |",
		"|--- |--- |---: |---: |---: |---: |",
		"| W=256 D=8 N=1000000 | whestbake philox (CPU twin) | 500000 | 2000 | 524.3 | 2.00× |",
		"| W=256 D=8 N=1000000 | whestbench create_dataset (numpy) | 250000 | 4000 | 262.1 | 1.00× |",
	})
}

// A GPU row switches to the GPU layout. By hand: 1e8 samples in 2 s is 5e7/s, 20 ms per
// 1e6, 52.4288 TFLOP/s, 78.37 % of 66.9; the torch peer's 1e8 in 10 s is 10.48576
// TFLOP/s (15.67 %). Ratios compare rates on the same shape even when the rows timed
// different sample counts; a shape the peer never ran gets "-"; a failed row's error
// goes under the table.
func TestTableGPULayoutAndRatios(t *testing.T) {
	big := Config{Width: 256, Depth: 8, NSamples: 100_000_000}
	cpu := Config{Width: 256, Depth: 8, NSamples: 1_000_000}
	other := Config{Width: 64, Depth: 4, NSamples: 1_000_000}
	got := tableLines(t, []Result{
		{Impl: "whestbake cuda fused", Config: big, Device: "cuda", Seconds: 2},
		{Impl: "torch-cuda", Config: big, Device: "cuda", Peer: PeerTorch, Seconds: 10},
		{Impl: "whestbake philox (CPU twin)", Config: cpu, Device: "cpu", Seconds: 1},
		{
			Impl:   "whestbake cuda cublas",
			Config: other,
			Device: "cuda",
			Err:    errors.New("cublas: boom"),
		},
		{Impl: "whestbake philox (CPU twin)", Config: other, Device: "cpu", Seconds: 0.5},
	}, 66.9)
	checkLines(t, got, []string{
		"| configuration | implementation | ms per 1e6 samples | samples/s | effective TFLOP/s " +
			"| % of FP32 peak | vs torch peer |",
		"|--- |--- |---: |---: |---: |---: |---: |",
		"| W=256 D=8 N=100000000 | whestbake cuda fused " +
			"| 20.0 | 50000000 | 52.43 | 78.4% | 5.00× |",
		"| W=256 D=8 N=100000000 | torch-cuda | 100.0 | 10000000 | 10.49 | 15.7% | 1.00× |",
		"| W=256 D=8 N=1000000 | whestbake philox (CPU twin) " +
			"| 1000.0 | 1000000 | 1.05 | - | 0.10× |",
		"| W=64 D=4 N=1000000 | whestbake cuda cublas | error 1 | | | | |",
		"| W=64 D=4 N=1000000 | whestbake philox (CPU twin) | 500.0 | 2000000 | 0.07 | - | - |",
		"",
		"error 1: whestbake cuda cublas, W=64 D=4: cublas: boom",
	})
}

// Both peers give a column each; a peer whose only row failed keeps its column, all "-".
func TestTableOneColumnPerPeer(t *testing.T) {
	cfg := Config{Width: 64, Depth: 4, NSamples: 1000}
	got := tableLines(t, []Result{
		{Impl: "whestbake philox (CPU twin)", Config: cfg, Device: "cpu", Seconds: 0.001},
		{
			Impl:   "torch peer",
			Config: cfg,
			Device: "cpu",
			Peer:   PeerTorch,
			Err:    errors.New("no torch"),
		},
		{Impl: "numpy-openblas", Config: cfg, Device: "cpu", Peer: PeerNumpy, Seconds: 0.004},
	}, 66.9)
	checkLines(t, got, []string{
		"| configuration | implementation | samples/s | ms per 1e6 samples | GFLOP/s " +
			"| vs numpy peer | vs torch peer |",
		"|--- |--- |---: |---: |---: |---: |---: |",
		"| W=64 D=4 N=1000 | whestbake philox (CPU twin) | 1000000 | 1000 | 32.8 | 4.00× | - |",
		"| W=64 D=4 N=1000 | torch peer | error 1 | | | | |",
		"| W=64 D=4 N=1000 | numpy-openblas | 250000 | 4000 | 8.2 | 1.00× | - |",
		"",
		"error 1: torch peer, W=64 D=4: no torch",
	})
}
