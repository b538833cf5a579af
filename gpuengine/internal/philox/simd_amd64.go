//go:build amd64 && !purego

package philox

import (
	"golang.org/x/sys/cpu"

	"github.com/whestbake/whestbake/gpuengine/internal/simdcap"
)

// kernel is one pair of assembly routines working on groups of `lanes`
// consecutive block slots, a slot being one Philox counter, four normals.
// philox writes each group's four output words as four vectors of lanes words;
// normals turns those vectors into the group's 4·lanes normals in slot order.
// Inside a group the slot in word lane l is laneSlot(l, lanes): the order that
// lets normals store whole registers after an in-lane 4×4 transpose.
type kernel struct {
	name   string
	lanes  int
	avx512 bool
}

var (
	avx2Kernel   = kernel{"avx2", 8, false}
	avx512Kernel = kernel{"avx512", 16, true}
	// kernels lists what this CPU runs, preferred first. cpu reports AVX2 and
	// AVX-512F only when the OS also saves the wider registers; the kernels
	// need nothing beyond those, no FMA and no other AVX-512 subset.
	// WHESTBAKE_CPU_KERNEL, read by simdcap, caps the list for tests and benchmarks.
	kernels = availableKernels()
)

// philox and normals call the assembly directly rather than through func
// values, which would make the buffers escape to the heap.
func (k kernel) philox(words *uint32, groups int, st *laneState) {
	if k.avx512 {
		philoxAVX512(words, groups, st)
	} else {
		philoxAVX2(words, groups, st)
	}
}

func (k kernel) normals(dst *float32, words *uint32, groups int) {
	if k.avx512 {
		normalsAVX512(dst, words, groups)
	} else {
		normalsAVX2(dst, words, groups)
	}
}

func availableKernels() []kernel {
	if !cpu.X86.HasAVX2 || !simdcap.Allows(simdcap.AVX2) {
		return nil
	}
	if cpu.X86.HasAVX512F && simdcap.Allows(simdcap.AVX512) {
		return []kernel{avx512Kernel, avx2Kernel}
	}
	return []kernel{avx2Kernel}
}

// See philox_avx2_amd64.s, normals_avx2_amd64.s and their _avx512 twins.
//
//go:noescape
func philoxAVX2(words *uint32, groups int, st *laneState)

//go:noescape
func normalsAVX2(dst *float32, words *uint32, groups int)

//go:noescape
func philoxAVX512(words *uint32, groups int, st *laneState)

//go:noescape
func normalsAVX512(dst *float32, words *uint32, groups int)

// laneState is what the philox routines read and advance, one uint64 per
// counter lane: the Philox state is kept in 64-bit lanes so VPMULUDQ gives the
// full 32×32→64 product. The assembly hard-codes the byte offsets noted.
type laneState struct {
	n     [16]uint64       // 0: sample index; lanes/2 lanes of register X, then of Y
	b     [16]uint64       // 128: block index j/4, same lanes
	stepN [4]uint64        // 256: whole samples one group advances a lane
	stepB [4]uint64        // 288: and the blocks beyond those, < nb
	nbm1  [4]uint64        // 320: nb − 1
	nb    [4]uint64        // 352: blocks per sample
	keys  [10][2][4]uint64 // 384: round keys (k0, k1) of rounds 0..9, each broadcast
}

// laneSlot is the slot inside a group of the word in lane l. With c 128-bit
// chunks per register, chunk l/4 holds slots l/4, l/4+c, l/4+2c, l/4+3c; the
// transpose in normals turns position p of every chunk into slots p·c ..
// p·c+c−1, which are contiguous in memory.
func laneSlot(l, lanes int) int {
	c := lanes / 4
	return c*(l%4) + l/4
}

// init sets the lanes to the first group of slots of a Fill from sample first.
// Register X's 64-bit lane k becomes word lane 4(k/2)+k%2 after the packing
// shuffle, register Y's lane k word lane 4(k/2)+2+k%2.
func (st *laneState) init(key [2]uint32, first uint64, nb, lanes int) {
	half := lanes / 2
	for k := 0; k < half; k++ {
		for y := 0; y < 2; y++ {
			slot := laneSlot(4*(k/2)+2*y+k%2, lanes)
			st.n[y*half+k] = first + uint64(slot/nb)
			st.b[y*half+k] = uint64(slot % nb)
		}
	}
	for i := range 4 {
		st.stepN[i] = uint64(lanes / nb)
		st.stepB[i] = uint64(lanes % nb)
		st.nbm1[i] = uint64(nb - 1)
		st.nb[i] = uint64(nb)
	}
	k0, k1 := key[0], key[1]
	for r := range st.keys {
		for i := range 4 {
			st.keys[r][0][i], st.keys[r][1][i] = uint64(k0), uint64(k1)
		}
		k0 += weylA
		k1 += weylB
	}
}

// One assembly call handles at most batchGroups groups, 256 slots with
// AVX-512, about a microsecond, since assembly cannot be preempted; the words
// buffer holds one batch.
const (
	batchGroups = 16
	maxLanes    = 16
)

func fillSIMD(s Sampler, dst []float32, first int64, rows int) bool {
	if len(kernels) == 0 {
		return false
	}
	kernels[0].fill(s, dst, first, rows)
	return true
}

// fill runs slots 0..rows·nb−1 through the kernel, slot t being block t mod nb
// of sample first+t/nb. With Width a multiple of 4 the slots are contiguous in
// dst and whole groups are written in place; otherwise, and for the last,
// partial group, they go through out.
func (k kernel) fill(s Sampler, dst []float32, first int64, rows int) {
	w := s.Width
	nb := (w + 3) / 4
	slots := rows * nb
	var st laneState
	st.init(s.Key, uint64(first), nb, k.lanes)
	var words [batchGroups * maxLanes * 4]uint32
	var out [batchGroups * maxLanes * 4]float32
	for t := 0; t < slots; t += batchGroups * k.lanes {
		n := min(batchGroups*k.lanes, slots-t)
		groups := (n + k.lanes - 1) / k.lanes
		k.philox(&words[0], groups, &st)
		if w%4 != 0 {
			k.normals(&out[0], &words[0], groups)
			scatter(dst, out[:4*n], t, nb, w)
			continue
		}
		full := n / k.lanes
		if full > 0 {
			k.normals(&dst[4*t], &words[0], full)
		}
		if rest := n - full*k.lanes; rest > 0 {
			k.normals(&out[0], &words[4*full*k.lanes], 1)
			copy(dst[4*(t+full*k.lanes):], out[:4*rest])
		}
	}
}
