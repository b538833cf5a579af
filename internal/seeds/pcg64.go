package seeds

import "math/bits"

// PCG64's 128-bit LCG multiplier, numpy's PCG_DEFAULT_MULTIPLIER_128.
const (
	pcgMultHi = 2549297995355413924
	pcgMultLo = 4865540595714422341
)

// PCG64 is numpy's PCG64 bit generator, XSL-RR 128/64, seeded the way
// default_rng(seedSequence) seeds it, with numpy's buffered 32-bit draws.
// It is not safe for concurrent use.
type PCG64 struct {
	stateHi, stateLo uint64 // 128-bit state
	incHi, incLo     uint64 // 128-bit increment, always odd
	hasUint32        bool   // a buffered upper half is waiting
	uinteger         uint32 // the buffered upper half
}

// PCG64State is the full generator state, including the buffered uint32, in
// the layout of numpy's PCG64.state: state and inc split into 64-bit halves.
type PCG64State struct {
	StateHi   uint64 `json:"state_hi"`
	StateLo   uint64 `json:"state_lo"`
	IncHi     uint64 `json:"inc_hi"`
	IncLo     uint64 `json:"inc_lo"`
	HasUint32 bool   `json:"has_uint32"`
	Uinteger  uint32 `json:"uinteger"`
}

// NewPCG64 seeds like numpy's PCG64(seedSequence): four uint64 words give
// initstate = v0:v1 and initseq = v2:v3, then pcg_setseq_128_srandom_r.
func NewPCG64(s SeedSequence) *PCG64 {
	v := s.GenerateState64(4)
	g := &PCG64{}
	g.incHi = v[2]<<1 | v[3]>>63
	g.incLo = v[3]<<1 | 1
	g.step()
	var carry uint64
	g.stateLo, carry = bits.Add64(g.stateLo, v[1], 0)
	g.stateHi, _ = bits.Add64(g.stateHi, v[0], carry)
	g.step()
	return g
}

// step advances state = state*mult + inc mod 2^128.
func (g *PCG64) step() {
	g.stateHi, g.stateLo = pcgStep(g.stateHi, g.stateLo, g.incHi, g.incLo)
}

func pcgStep(hi, lo, incHi, incLo uint64) (uint64, uint64) {
	mHi, mLo := bits.Mul64(lo, pcgMultLo)
	mHi += hi*pcgMultLo + lo*pcgMultHi
	var carry uint64
	lo, carry = bits.Add64(mLo, incLo, 0)
	hi, _ = bits.Add64(mHi, incHi, carry)
	return hi, lo
}

// pcgOutput is the XSL-RR output function of the already stepped state.
func pcgOutput(hi, lo uint64) uint64 {
	return bits.RotateLeft64(hi^lo, -int(hi>>58))
}

// NextUint64 steps, then outputs, as numpy's pcg64_next64; it does not touch
// the 32-bit buffer.
func (g *PCG64) NextUint64() uint64 {
	g.step()
	return pcgOutput(g.stateHi, g.stateLo)
}

// NextUint32 returns the buffered upper half if there is one; otherwise it
// draws a uint64, returns its low half and buffers the high half.
func (g *PCG64) NextUint32() uint32 {
	if g.hasUint32 {
		g.hasUint32 = false
		return g.uinteger
	}
	r := g.NextUint64()
	g.hasUint32 = true
	g.uinteger = uint32(r >> 32)
	return uint32(r)
}

// NextDouble is numpy's next_double: 53 random bits scaled into [0, 1).
func (g *PCG64) NextDouble() float64 {
	return float64(g.NextUint64()>>11) * (1.0 / (1 << 53))
}

// NextFloat is numpy's next_float: 24 random bits scaled into [0, 1).
func (g *PCG64) NextFloat() float32 {
	return float32(g.NextUint32()>>8) * (1.0 / (1 << 24))
}

// State returns the full state, for checkpoints.
func (g *PCG64) State() PCG64State {
	return PCG64State{
		StateHi:   g.stateHi,
		StateLo:   g.stateLo,
		IncHi:     g.incHi,
		IncLo:     g.incLo,
		HasUint32: g.hasUint32,
		Uinteger:  g.uinteger,
	}
}

// SetState restores a state taken with State. Like numpy, it accepts any
// values; an even increment is not rejected because numpy does not reject it.
func (g *PCG64) SetState(st PCG64State) {
	g.stateHi = st.StateHi
	g.stateLo = st.StateLo
	g.incHi = st.IncHi
	g.incLo = st.IncLo
	g.hasUint32 = st.HasUint32
	g.uinteger = st.Uinteger
}
