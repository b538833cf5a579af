package cudakernel

import (
	"fmt"
	"slices"
)

// Tile is the algorithm's tile of consecutive samples whose float64 sums are formed
// sequentially: WB_TILE in fixed.cuh, gpuengine.PhiloxTile.
const Tile = 32

// FusedShape is mlp_fused's compile-time geometry, its -D constants. None of it can
// change a result bit; it only sets speed and resource use.
type FusedShape struct {
	W, D   int // network width and depth
	WP     int // W rounded up to a multiple of CT; the extra weights and inputs are zero
	TM     int // samples per CTA tile, a multiple of Tile
	RT, CT int // outputs per thread: RT rows × CT columns
	KS     int // weight rows per double-buffered shared-memory slice
	// KU is how many steps of four k the slice loop unrolls, 0 or 1 for none; more code
	// for fewer loop edges, where the next step's shared loads can start early.
	KU int
	// Resident keeps every layer's weights in shared memory for the whole launch, in
	// place of the double-buffered slices: a layer then has no copy and no barrier.
	Resident bool
}

// PlanFused picks the fused kernel's shape for a W×D network on a device that allows
// maxShared bytes of shared memory per block, the opt-in maximum, 232448 on sm_90:
// the first of FusedPlans.
func PlanFused(w, d, maxShared int) (FusedShape, error) {
	plans, err := FusedPlans(w, d, maxShared)
	if err != nil {
		return FusedShape{}, err
	}
	return plans[0], nil
}

// FusedPlans returns the fused kernel's shapes for a W×D network in order of
// preference. The first has 16 columns per thread from W > 128, 128
// accumulators as in the register tiling of docs/GPU.md, the largest tile that
// fits, then the largest slice. With 128 accumulators a thread sits at sm_90's
// 255-register cap, so a ptxas that needs a few more spills the fragment to
// local memory; the next plans halve the fragment to RT=4: first with the same
// tile and slice loop, which doubles the CTA to 512 threads, caps a thread at 128
// of an SM's 65,536 registers and puts 16 warps on an SM in place of 8, then the
// same with its loop rolled, then with at most 256 threads, where the cap is 255
// again for 64 accumulators. RT×CT = 8×8 at 512 threads is no fallback: its
// cubins for sm_90 and sm_80 spill at 128 registers with NVRTC 11.8. Narrow networks
// whose layers all fit beside the tile in half the device's shared memory, two
// CTAs per SM, keep them resident first. No shape changes a result bit: each
// output's fma chain runs over k in ascending order whatever the tiling.
func FusedPlans(w, d, maxShared int) ([]FusedShape, error) {
	ct := 16
	switch {
	case w <= 64:
		ct = 4
	case w <= 128:
		ct = 8
	}
	var plans []FusedShape
	add := func(s FusedShape, ok bool) {
		if ok && !slices.Contains(plans, s) {
			plans = append(plans, s)
		}
	}
	add(residentFused(w, d, ct, maxShared))
	if ct == 16 {
		// Measured on an H100 at 256×8, in docs/benchmarks.md: 32-row slices halve the
		// barriers and copies per layer, and a slice loop unrolled whole lets every
		// step's shared loads start under the previous step's fmas; 40.8 TFLOP/s
		// against 34.0 for KS=16 with the loop rolled.
		add(largestFused(w, d, 8, ct, maxShared, 1024, []int{32, 16, 8, 4}, true))
		add(largestFused(w, d, 4, ct, maxShared, 1024, []int{32, 16, 8, 4}, true))
		add(largestFused(w, d, 4, ct, maxShared, 1024, defaultSlices, false))
		add(largestFused(w, d, 4, ct, maxShared, 256, defaultSlices, false))
	} else {
		add(largestFused(w, d, 8, ct, maxShared, 1024, defaultSlices, false))
	}
	if len(plans) == 0 {
		wp := (w + ct - 1) / ct * ct
		smallest := FusedShape{
			W:  w,
			WP: wp,
			TM: 32,
			KS: 4,
		}
		return nil, fmt.Errorf(
			"fused kernel: width %d needs %d bytes of shared memory even with 32-sample tiles, "+
				"the device allows %d; use the cublas path (WHESTBAKE_CUDA_PATH=cublas)",
			w,
			smallest.SharedBytes(),
			maxShared,
		)
	}
	return plans, nil
}

// residentFused is the RT=8 shape with every layer's weights in shared memory, when
// they fit beside a 128-sample tile in half of maxShared, so that two CTAs share an SM
// where one alone would leave it idle at each barrier. Its slice is the whole layer up to
// W=64, its loop unrolled whole: nothing waits between slices, and 16 steps of four k
// are 32 KiB of code, half the production shape's slice loop.
func residentFused(w, d, ct, maxShared int) (FusedShape, bool) {
	wp := (w + ct - 1) / ct * ct
	s := FusedShape{W: w, D: d, WP: wp, TM: 128, RT: 8, CT: ct, Resident: true}
	for _, k := range []int{wp, 32, 16, 8, 4} {
		if k <= 64 && k%4 == 0 && wp%k == 0 {
			s.KS = k
			break
		}
	}
	if s.KS > 4 {
		s.KU = s.KS / 4
	}
	return s, s.Validate(maxShared/2) == nil
}

// defaultSlices are the slice heights tried, largest first, where nothing was measured
// to prefer another.
var defaultSlices = []int{16, 8, 4}

// largestFused is the RT×CT tiling's shape with the largest tile, then slice of ks,
// that fits the device and has at most maxThreads threads; with unroll, its slice loop
// is unrolled whole.
func largestFused(
	w, d, rt, ct, maxShared, maxThreads int,
	ks []int,
	unroll bool,
) (FusedShape, bool) {
	wp := (w + ct - 1) / ct * ct
	for _, tm := range []int{128, 64, 32} {
		for _, k := range ks {
			s := FusedShape{
				W:  w,
				D:  d,
				WP: wp,
				TM: tm,
				RT: rt,
				CT: ct,
				KS: k,
			}
			if unroll && k > 4 {
				s.KU = k / 4
			}
			if s.Validate(maxShared) == nil && s.Threads() <= maxThreads {
				return s, true
			}
		}
	}
	return FusedShape{}, false
}

// ChooseFused compiles plans of mlp_fused or mlp_tf32x3 in order until one uses no
// local memory, and returns it
// with its compiled module M. compile reports a spill as a non-empty description, from
// ptxas's report or the loaded function's attributes; discard releases a module that
// is not kept. If every plan spills, the first, preferred one is kept: a spill costs
// speed, never a bit. A compile error ends the choice at once: it is a fault, not a
// resource limit, and a fallback would hide it. notes say what was tried and why, for
// the engine's startup log.
func ChooseFused[S fmt.Stringer, M any](
	plans []S,
	compile func(S) (M, string, error),
	discard func(M),
) (S, M, []string, error) {
	var (
		first   M
		kept    bool
		notes   []string
		nothing M
	)
	for i, s := range plans {
		m, spill, err := compile(s)
		if err != nil {
			if kept {
				discard(first)
			}
			var none S
			return none, nothing, notes, err
		}
		if spill == "" {
			if kept {
				discard(first)
			}
			if i > 0 {
				notes = append(
					notes,
					fmt.Sprintf("%v: no local memory; using it instead of %v", s, plans[0]),
				)
			}
			return s, m, notes, nil
		}
		notes = append(notes, fmt.Sprintf("%v spills (%s)", s, spill))
		if i == 0 {
			first, kept = m, true
		} else {
			discard(m)
		}
	}
	notes = append(
		notes,
		fmt.Sprintf("every tiling spills; using %v (slower, same bits)", plans[0]),
	)
	return plans[0], first, notes, nil
}

// Validate reports the first constraint of the kernel that s breaks.
func (s FusedShape) Validate(maxShared int) error {
	switch {
	case s.W <= 0 || s.D <= 0:
		return fmt.Errorf("fused shape: width %d and depth %d must be positive", s.W, s.D)
	case s.CT <= 0 || s.CT%4 != 0 || s.CT > 16:
		return fmt.Errorf(
			"fused shape: CT=%d columns per thread must be 4, 8, 12 or 16 "+
				"(float4 accesses, register budget)",
			s.CT,
		)
	case s.RT <= 0 || s.RT > 8:
		return fmt.Errorf("fused shape: RT=%d rows per thread must be in [1, 8]", s.RT)
	case s.WP < s.W || s.WP%s.CT != 0 || s.WP-s.W >= s.CT:
		return fmt.Errorf(
			"fused shape: WP=%d must be W=%d rounded up to a multiple of CT=%d",
			s.WP,
			s.W,
			s.CT,
		)
	case s.TM <= 0 || s.TM%Tile != 0 || s.TM%s.RT != 0:
		return fmt.Errorf(
			"fused shape: TM=%d must be a positive multiple of %d and of RT=%d",
			s.TM,
			Tile,
			s.RT,
		)
	case s.KS <= 0 || s.KS%4 != 0 || s.WP%s.KS != 0:
		return fmt.Errorf("fused shape: KS=%d must be a multiple of 4 dividing WP=%d", s.KS, s.WP)
	case s.KU < 0 || s.KU > 1 && (s.KS/4)%s.KU != 0:
		return fmt.Errorf(
			"fused shape: KU=%d must be 0, 1 or divide the KS/4=%d steps of a slice",
			s.KU,
			s.KS/4,
		)
	case s.Threads() > 1024:
		return fmt.Errorf("fused shape: %d threads per CTA exceed CUDA's 1024", s.Threads())
	case s.SharedBytes() > maxShared:
		return fmt.Errorf(
			"fused shape: %d bytes of shared memory exceed the device's %d",
			s.SharedBytes(),
			maxShared,
		)
	}
	return nil
}

// Threads is the CTA size: WP/CT thread columns × TM/RT thread rows.
func (s FusedShape) Threads() int { return s.WP / s.CT * (s.TM / s.RT) }

// SharedBytes is the dynamic shared memory of one CTA: the tile's activations and two
// weight slices, or every layer's weights when they are resident.
func (s FusedShape) SharedBytes() int {
	if s.Resident {
		return 4 * (s.TM*s.WP + s.D*s.WP*s.WP)
	}
	return 4 * (s.TM*s.WP + 2*s.KS*s.WP)
}

// Values is the number of exact totals: D·W layer sums, then W sums of squares.
func (s FusedShape) Values() int { return (s.D + 1) * s.W }

// Lanes is how many threads share a column's tile sums, WB_LANES: the tile's 32-row
// tiles are dealt to as many threads as the CTA has per column, at most one tile each,
// so that narrow layers occupy every thread, as ts_colsums in tile.cuh deals them.
func (s FusedShape) Lanes() int { return lanes(s.TM, s.Threads(), s.W) }

// SlotWords is the scratch one CTA needs for its exact partial totals: three limbs per
// value and lane.
func (s FusedShape) SlotWords() int { return 3 * s.Lanes() * s.Values() }

// Grid is the number of CTAs for count samples: one per tile, at most maxCTAs,
// the CTAs that fit on the device at once; the kernel loops over the rest.
func (s FusedShape) Grid(count int64, maxCTAs int) int {
	tiles := (count + int64(s.TM) - 1) / int64(s.TM)
	return int(min(tiles, int64(maxCTAs)))
}

// Defines are the -D options of fused.cu.
func (s FusedShape) Defines() []string {
	defs := []string{
		fmt.Sprintf("-DWB_W=%d", s.W),
		fmt.Sprintf("-DWB_WP=%d", s.WP),
		fmt.Sprintf("-DWB_D=%d", s.D),
		fmt.Sprintf("-DWB_TM=%d", s.TM),
		fmt.Sprintf("-DWB_RT=%d", s.RT),
		fmt.Sprintf("-DWB_CT=%d", s.CT),
		fmt.Sprintf("-DWB_KS=%d", s.KS),
		fmt.Sprintf("-DWB_LANES=%d", s.Lanes()),
	}
	if s.KU > 1 {
		defs = append(defs, fmt.Sprintf("-DWB_KU=%d", s.KU))
	}
	if s.Resident {
		defs = append(defs, "-DWB_RESIDENT=1")
	}
	return defs
}

// String names the shape for logs and metadata.
func (s FusedShape) String() string {
	name := fmt.Sprintf(
		"fused W%d D%d WP%d TM%d RT%d CT%d KS%d",
		s.W,
		s.D,
		s.WP,
		s.TM,
		s.RT,
		s.CT,
		s.KS,
	)
	if s.KU > 1 {
		name += fmt.Sprintf(" KU%d", s.KU)
	}
	if s.Resident {
		name += " resident"
	}
	return name
}

// lanes is the largest divisor of a tile's tm/Tile tiles that is at most
// threads/width, and at least 1.
func lanes(tm, threads, width int) int {
	tiles := tm / Tile
	g := max(1, min(tiles, threads/width))
	for tiles%g != 0 {
		g--
	}
	return g
}

// PadWeights returns the depth W×W layers of w, layer-major then row-major, as WP×WP
// layers with zeros outside, the layout mlp_fused reads.
func PadWeights(w []float32, width, depth, wp int) []float32 {
	out := make([]float32, depth*wp*wp)
	for l := 0; l < depth; l++ {
		for k := 0; k < width; k++ {
			copy(out[(l*wp+k)*wp:(l*wp+k)*wp+width], w[(l*width+k)*width:(l*width+k+1)*width])
		}
	}
	return out
}

// Pipeline kernel geometry, fixed in pipeline.cu.
const (
	PipelineTilesPerCTA = 32  // P_TILES_PER_CTA: 32-row tiles per relu_tilesum thread
	PipelineColsPerCTA  = 128 // P_COLS_PER_CTA: relu_tilesum threads per CTA
)

// PipelineShape is the cuBLAS pipeline's geometry: every GEMM has Rows×W×W, also for
// the last, partly padded chunk, because cuBLAS picks its kernel, and so its
// summation order, by shape.
type PipelineShape struct {
	W, D, Rows int
}

// pipelineBufferBytes bounds one activation buffer of the pipeline; there are two.
const pipelineBufferBytes = 256 << 20

// maxGridY is CUDA's limit on a grid's y dimension: x allows 2^31−1, y and z 65,535.
const maxGridY = 65535

// PlanPipeline sizes the GEMM chunk for a W×D network: as many rows as fit in
// pipelineBufferBytes, a multiple of the tile, never more than a step needs, and no
// more than relu_tilesum's grid can cover. Its y dimension is the chunk's row groups:
// at W=1 the buffer alone would allow 2^26 rows, 65,536 groups, one past the limit.
func PlanPipeline(w, d int, step int64) PipelineShape {
	rows := int64(pipelineBufferBytes / (4 * w))
	rows = min(rows, (step+Tile-1)/Tile*Tile, maxGridY*Tile*PipelineTilesPerCTA)
	rows = max(Tile, rows/Tile*Tile)
	return PipelineShape{W: w, D: d, Rows: int(rows)}
}

// Values is the number of exact totals, as for the fused kernel.
func (p PipelineShape) Values() int { return (p.D + 1) * p.W }

// SumGrid is relu_tilesum's grid: column blocks × row groups.
func (p PipelineShape) SumGrid() (x, y int) {
	return (p.W + PipelineColsPerCTA - 1) / PipelineColsPerCTA,
		(p.Rows + Tile*PipelineTilesPerCTA - 1) / (Tile * PipelineTilesPerCTA)
}

// Defines are the -D options of pipeline.cu.
func (p PipelineShape) Defines() []string {
	return []string{fmt.Sprintf("-DWB_W=%d", p.W), fmt.Sprintf("-DWB_D=%d", p.D)}
}

// Step limits for one GPU launch sequence between checkpoints.
const (
	DefaultStep = 1 << 22 // ≈ 0.1 s of the fused kernel at W=256, D=8 on an H100, estimated
	MaxStep     = 1 << 30 // keeps every carry-save word below 2^64: < 2^32 flushes per step
)

// Step is the samples per launch sequence and checkpoint for a requested chunk size
// with 0 meaning DefaultStep: a multiple of the tile, at most MaxStep. It never changes results.
func Step(chunkSize int) int64 {
	s := int64(chunkSize)
	if s <= 0 {
		s = DefaultStep
	}
	s = (s + Tile - 1) / Tile * Tile
	return min(s, MaxStep)
}

// TilingCandidates are the shapes of a W×D network that the tiling sweep times
// against each other in gpuengine's BenchmarkCUDAFusedTilings, as docs/GPU.md says, each
// checked bit for bit against PlanFused's result: every plan of FusedPlans, then,
// of the first two, the same with half the slice and half the tile, and of a
// resident plan the same streamed. make cuda-check compiles them all for spills.
func TilingCandidates(w, d, maxShared int) []FusedShape {
	plans, err := FusedPlans(w, d, maxShared)
	if err != nil {
		return nil
	}
	out := slices.Clone(plans)
	add := func(s FusedShape) {
		if s.Validate(maxShared) == nil && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, p := range plans[:min(2, len(plans))] {
		half := p
		half.KS, half.KU = p.KS/2, p.KU/2
		add(half)
		half = p
		half.TM = p.TM / 2
		add(half)
		if p.Resident {
			p.Resident = false
			add(p)
		}
	}
	return out
}
