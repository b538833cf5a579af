package cudakernel

import (
	"cmp"
	_ "embed"
	"fmt"
	"math"
	"slices"
)

// TF32x3Source is tf32x3.cu, the source of the kernel mlp_tf32x3 that --precision tf32x3 runs.
//
//go:embed tf32x3.cu
var TF32x3Source string

// TF32x3Scheme names what mlp_tf32x3 computes, for metadata and checkpoints: the
// instruction; the split, big with the low 13 bits cleared and small the remainder
// rounded to nearest, ties away; and the order of one output's sum: per step of eight k
// from zero, small·big, big·small, big·big, then added to the FP32 accumulator to nearest.
const TF32x3Scheme = "mma.sync.m16n8k8.tf32 3xTF32 big=RZ small=RNA sb,bs,bb k8-from-0 +RN/1"

// tf32Warps is mlp_tf32x3's warps per CTA: 8, as mlp_fused's production shape, so that
// a 128-sample tile gives each warp 128 accumulators a thread at W=256.
const tf32Warps = 8

// TF32Shape is mlp_tf32x3's compile-time geometry, its -D constants. None of it moves
// a bit: each output's sum is fixed by the scheme, not the tiling.
type TF32Shape struct {
	W, D   int // network width and depth
	WP     int // W rounded up to a multiple of 8·WN; the extra weights and inputs are zero
	TM     int // samples per CTA tile, a multiple of Tile and of 16·WM
	WM, WN int // warps across the tile's rows and columns, WM·WN = 8
	KS     int // weight rows per double-buffered shared slice, a multiple of 8
}

// PlanTF32 picks mlp_tf32x3's shape for a W×D network on a device that allows maxShared
// bytes of shared memory per block: the first of TF32Plans.
func PlanTF32(w, d, maxShared int) (TF32Shape, error) {
	plans, err := TF32Plans(w, d, maxShared)
	if err != nil {
		return TF32Shape{}, err
	}
	return plans[0], nil
}

// TF32Plans returns mlp_tf32x3's shapes for a W×D network in order of preference: the
// least padding, then the largest tile, then warps of 4×8 n8 tiles, with fewer shared
// bytes per mma than 2×16 at the same 128 accumulators, then 2×16, then the larger of two
// slice heights. At W=256 the first sits at 255 registers, so a ptxas that needs a few
// more spills; the engine's ChooseFused then takes the next that does not. The shape
// moves no bit: the scheme fixes each output's sum.
func TF32Plans(w, d, maxShared int) ([]TF32Shape, error) {
	type ranked struct {
		s       TF32Shape
		pref, k int
	}
	var all []ranked
	for pref, warps := range [][2]int{{2, 4}, {4, 2}, {1, 8}, {8, 1}} {
		for _, tm := range []int{128, 64, 32} {
			k := 0
			for _, ks := range []int{64, 32, 16, 8} {
				s := TF32Shape{W: w, D: d, TM: tm, WM: warps[0], WN: warps[1], KS: ks}
				s.WP = (w + 8*s.WN - 1) / (8 * s.WN) * 8 * s.WN
				if s.Validate(maxShared) == nil && k < 2 {
					all = append(all, ranked{s, pref, k})
					k++
				}
			}
		}
	}
	if len(all) == 0 {
		return nil, fmt.Errorf(
			"tf32x3: width %d does not fit the tensor-core kernel's tiles in %d bytes of "+
				"shared memory; use --precision fp32",
			w,
			maxShared,
		)
	}
	slices.SortStableFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.s.WP, b.s.WP), cmp.Compare(b.s.TM, a.s.TM),
			cmp.Compare(a.pref, b.pref), cmp.Compare(a.k, b.k))
	})
	var plans []TF32Shape
	for _, r := range all {
		if len(plans) < 4 {
			plans = append(plans, r.s)
		}
	}
	return plans, nil
}

// Validate reports the first constraint of the kernel that s breaks.
func (s TF32Shape) Validate(maxShared int) error {
	switch {
	case s.W <= 0 || s.D <= 0:
		return fmt.Errorf("tf32x3 shape: width %d and depth %d must be positive", s.W, s.D)
	case s.WM <= 0 || s.WN <= 0 || s.WM*s.WN != tf32Warps:
		return fmt.Errorf("tf32x3 shape: %d×%d warps, want %d", s.WM, s.WN, tf32Warps)
	case s.WP < s.W || s.WP%(8*s.WN) != 0 || s.WP-s.W >= 8*s.WN:
		return fmt.Errorf(
			"tf32x3 shape: WP=%d must be W=%d rounded up to a multiple of %d",
			s.WP,
			s.W,
			8*s.WN,
		)
	case s.TM <= 0 || s.TM%Tile != 0 || s.TM%(16*s.WM) != 0:
		return fmt.Errorf(
			"tf32x3 shape: TM=%d must be a multiple of %d and of 16·WM=%d",
			s.TM,
			Tile,
			16*s.WM,
		)
	case s.KS <= 0 || s.KS%8 != 0 || s.WP%s.KS != 0:
		return fmt.Errorf("tf32x3 shape: KS=%d must be a multiple of 8 dividing WP=%d", s.KS, s.WP)
	case s.Accumulators() > 128:
		return fmt.Errorf(
			"tf32x3 shape: %d accumulators a thread exceed 128 (255 registers)",
			s.Accumulators(),
		)
	case s.SharedBytes() > maxShared:
		return fmt.Errorf(
			"tf32x3 shape: %d bytes of shared memory exceed the device's %d",
			s.SharedBytes(),
			maxShared,
		)
	}
	return nil
}

// Accumulators is the outputs one thread holds: 4 per m16n8 tile of its warp.
func (s TF32Shape) Accumulators() int { return 4 * (s.TM / 16 / s.WM) * (s.WP / 8 / s.WN) }

// Threads is the CTA size.
func (s TF32Shape) Threads() int { return 32 * s.WM * s.WN }

// SharedBytes is the dynamic shared memory of one CTA: the tile's activations, rows WP+4
// floats apart, and two weight slices of 8 bytes a weight, big and small.
func (s TF32Shape) SharedBytes() int { return 4*s.TM*(s.WP+4) + 2*8*s.KS*s.WP }

// Values is the number of exact totals: D·W layer sums, then W sums of squares.
func (s TF32Shape) Values() int { return (s.D + 1) * s.W }

// Lanes is how many threads share a column's tile sums, as FusedShape.Lanes.
func (s TF32Shape) Lanes() int { return lanes(s.TM, s.Threads(), s.W) }

// SlotWords is the scratch one CTA needs for its exact partial totals.
func (s TF32Shape) SlotWords() int { return 3 * s.Lanes() * s.Values() }

// Grid is the number of CTAs for count samples, as FusedShape.Grid.
func (s TF32Shape) Grid(count int64, maxCTAs int) int {
	tiles := (count + int64(s.TM) - 1) / int64(s.TM)
	return int(min(tiles, int64(maxCTAs)))
}

// Defines are the -D options of tf32x3.cu.
func (s TF32Shape) Defines() []string {
	return []string{
		fmt.Sprintf("-DWB_W=%d", s.W),
		fmt.Sprintf("-DWB_WP=%d", s.WP),
		fmt.Sprintf("-DWB_D=%d", s.D),
		fmt.Sprintf("-DWB_TM=%d", s.TM),
		fmt.Sprintf("-DWB_WM=%d", s.WM),
		fmt.Sprintf("-DWB_WN=%d", s.WN),
		fmt.Sprintf("-DWB_KS=%d", s.KS),
		fmt.Sprintf("-DWB_LANES=%d", s.Lanes()),
	}
}

// String names the shape for logs and metadata.
func (s TF32Shape) String() string {
	return fmt.Sprintf(
		"tf32x3 W%d D%d WP%d TM%d WM%d WN%d KS%d",
		s.W,
		s.D,
		s.WP,
		s.TM,
		s.WM,
		s.WN,
		s.KS,
	)
}

// TF32Split splits x into its big and small TF32 parts as mlp_tf32x3 does: big is x
// with its low 13 bits cleared, small the exact remainder x − big rounded to TF32 to
// nearest with ties away from zero, which is PTX's cvt.rna.tf32.f32; both as 32-bit words.
func TF32Split(x float32) (big, small uint32) {
	big = math.Float32bits(x) &^ 0x1fff
	r := math.Float32bits(x - math.Float32frombits(big))
	if r&0x7f800000 != 0x7f800000 {
		r = (r + 0x1000) &^ 0x1fff
	}
	return big, r
}

// PackTF32Weights lays out the depth W×W layers of w, layer-major then row-major, as
// mlp_tf32x3 reads them: per layer, k8 step kk and n8 tile n, 32 lanes of four words,
// W[8kk+t][8n+g] big, W[8kk+t+4][8n+g] big, then both small, for lane 4g + t, zero
// outside W×W: the B fragments of the PTX ISA's mma.m16n8k8 .tf32, one 16-byte load a
// lane.
func PackTF32Weights(w []float32, width, depth, wp int) []uint32 {
	n8 := wp / 8
	out := make([]uint32, depth*wp*wp*2)
	at := func(l, k, c int) float32 {
		if k >= width || c >= width {
			return 0
		}
		return w[(l*width+k)*width+c]
	}
	for l := range depth {
		for kk := range n8 {
			for n := range n8 {
				for lane := range 32 {
					g, t := lane/4, lane%4
					b0, s0 := TF32Split(at(l, 8*kk+t, 8*n+g))
					b1, s1 := TF32Split(at(l, 8*kk+t+4, 8*n+g))
					o := 4 * (((l*n8+kk)*n8+n)*32 + lane)
					out[o], out[o+1], out[o+2], out[o+3] = b0, b1, s0, s1
				}
			}
		}
	}
	return out
}
