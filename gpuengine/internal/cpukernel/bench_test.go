package cpukernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The benchmarks report GFLOP/s counting 2*rows*width*width flops per call, the
// same count the peers (internal/bench/whestbench_peer.py) use, single-threaded.

type benchShape struct{ rows, width int }

// The row counts are whestbench's CPU chunk sizes for these widths.
var benchShapes = []benchShape{{4096, 256}, {16384, 64}, {2048, 512}, {1024, 1024}}

type forwardFunc func(dst, src []float32, rows, width int, w []float32, mode Mode)

func benchForward(b *testing.B, fn forwardFunc, sh benchShape, mode Mode) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := normals(rng, sh.rows*sh.width, 1)
	w := normals(rng, sh.width*sh.width, 0.1)
	dst := make([]float32, sh.rows*sh.width)
	for b.Loop() {
		fn(dst, src, sh.rows, sh.width, w, mode)
	}
	flops := 2 * float64(sh.rows) * float64(sh.width) * float64(sh.width)
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkForward measures the public entry point (the active implementation,
// see Impl) and the generic code on 1/16 of the rows, which is slow.
func BenchmarkForward(b *testing.B) {
	for _, sh := range benchShapes {
		for _, mode := range []Mode{FMA, MulAdd} {
			b.Run(
				fmt.Sprintf("W=%d/rows=%d/%s/%s", sh.width, sh.rows, mode, Impl()),
				func(b *testing.B) {
					benchForward(b, Forward, sh, mode)
				},
			)
			b.Run(
				fmt.Sprintf("W=%d/rows=%d/%s/generic", sh.width, sh.rows/16, mode),
				func(b *testing.B) {
					benchForward(b, forwardGeneric, benchShape{sh.rows / 16, sh.width}, mode)
				},
			)
		}
	}
}

func BenchmarkColumnStats(b *testing.B) {
	const rows, width = 4096, 256
	rng := rand.New(rand.NewPCG(3, 4))
	x := normals(rng, rows*width, 1)
	sums := make([]float64, width)
	b.Run("sums", func(b *testing.B) {
		for b.Loop() {
			AddColumnSums(sums, x, rows, width)
		}
	})
	b.Run("squares", func(b *testing.B) {
		for b.Loop() {
			AddColumnSquares(sums, x, rows, width)
		}
	})
}

func normals(rng *rand.Rand, n int, scale float64) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64() * scale)
	}
	return x
}
