// A CTA tile's inputs and statistics, shared by the fused kernels (fused.cu, tf32x3.cu): the
// inputs of TM consecutive samples into the tile's activations xs (row r at r·XS), each
// layer's 32-row tile sums into the CTA's exact slot, and the slot's flush into the launch
// totals. None of it depends on how the kernel multiplies.
//
// The including kernel defines W, WP, D, TM, XS (the row stride of xs, ≥ WP), F_NT (threads
// per CTA), F_NV (exact values) and TS_LANES (the slot's lanes, below).
#ifndef WB_TILE_CUH
#define WB_TILE_CUH
#include "philox.cuh"
#include "fixed.cuh"

#define TS_TILES (TM / WB_TILE) // 32-row tiles of a CTA tile
#define TS_ILP 4                // Philox blocks one thread computes together
#ifndef TS_PER_MAX              // the host harness sizes the chains for its largest shape
#define TS_PER_MAX (TS_TILES / TS_LANES)
#endif

// Inputs of samples first..first+TM−1 into xs; rows ≥ valid and columns ≥ W are zero.
// A thread computes TS_ILP blocks at once, interleaved (philox4x32_10_n), and the
// Box–Muller steps after them have no branch, so the blocks overlap in the pipelines.
WB_DEVICE void ts_inputs(int tid, float* xs, u64 first, int valid, u32 k0, u32 k1)
{
    const int nb = WP / 4, items = TM * nb;
    for (int i0 = tid; i0 < items; i0 += TS_ILP * F_NT) {
        u32x4 c[TS_ILP];
#pragma unroll
        for (int p = 0; p < TS_ILP; p++) {
            const int i = i0 + p * F_NT, r = i / nb;
            const u64 n = first + (u64)r;
            c[p] = u32x4{(u32)n, (u32)(n >> 32), (u32)(i - r * nb), 0u};
        }
        philox4x32_10_n<TS_ILP>(c, k0, k1);
#pragma unroll
        for (int p = 0; p < TS_ILP; p++) {
            const int i = i0 + p * F_NT, r = i / nb, b = i - r * nb;
            const float4 z = philox_normals4(c[p], 4 * b, W, r < valid);
            if (items % (TS_ILP * F_NT) == 0 || i < items)
                *(float4*)&xs[r * XS + 4 * b] = z;
        }
    }
}

// The CTA's slot holds TS_LANES partial sums per value, one Fix192 each: limb k of value v
// in lane g at (3g + k)·F_NV + v. A lane is written by one thread only (ts_colsums), so
// the slot needs no atomics; ts_flush adds the lanes after a barrier.
WB_DEVICE void slot_add(u64* slot, int g, int v, const Fix192& s)
{
    u64* lane = slot + (u64)3 * g * F_NV;
    Fix192 cur = {lane[v], lane[F_NV + v], lane[2 * F_NV + v]};
    fix_add(cur, s);
    lane[v] = cur.w0;
    lane[F_NV + v] = cur.w1;
    lane[2 * F_NV + v] = cur.w2;
}

// Layer l's tile sums of every column (and, with SQ, of the squares) into the slot. The
// TS_TILES tiles of a column are dealt to TS_LANES threads (tiles g, g + TS_LANES, ... to
// lane g), so narrow layers still occupy every thread, and a thread sums its tiles as
// independent float64 chains. Each chain is one tile's sequential sum over all 32 rows from
// +0: the rows past the valid ones hold +0 (zero inputs stay +0 through fma and relu), and
// adding +0.0 to a sum of non-negative values changes no bit, so the chains need no bound.
template <bool SQ>
WB_DEVICE void ts_colsums_(int tid, const float* xs, int l, u64* slot, u64* err)
{
    const int per = TS_TILES / TS_LANES;
    bool bad = false;
    for (int i = tid; i < W * TS_LANES; i += F_NT) {
        const int c = i % W, g = i / W;
        double t[TS_PER_MAX], q[TS_PER_MAX];
#pragma unroll
        for (int j = 0; j < per; j++)
            t[j] = q[j] = 0.0;
        for (int r = 0; r < WB_TILE; r++) {
#pragma unroll
            for (int j = 0; j < per; j++) {
                const double v = (double)xs[((g + j * TS_LANES) * WB_TILE + r) * XS + c];
                t[j] = __dadd_rn(t[j], v);
                if (SQ)
                    q[j] = __dadd_rn(q[j], __dmul_rn(v, v));
            }
        }
        Fix192 s = fix_zero(), sq = fix_zero();
#pragma unroll
        for (int j = 0; j < per; j++) {
            fix_add(s, fix_from_double(t[j], bad));
            if (SQ)
                fix_add(sq, fix_from_double(q[j], bad));
        }
        slot_add(slot, g, l * W + c, s);
        if (SQ)
            slot_add(slot, g, D * W + c, sq);
    }
    if (bad)
        atomicOr(err, 1ull);
}

WB_DEVICE void ts_colsums(int tid, const float* xs, int l, u64* slot, u64* err)
{
    if (l == D - 1)
        ts_colsums_<true>(tid, xs, l, slot, err);
    else
        ts_colsums_<false>(tid, xs, l, slot, err);
}

WB_DEVICE void ts_slot_zero(int tid, u64* slot)
{
    for (int i = tid; i < 3 * TS_LANES * F_NV; i += F_NT)
        slot[i] = 0ull;
}

// The slot's lanes, summed per value, into the launch's carry-save words. After a barrier:
// the lanes of a value were written by different threads.
WB_DEVICE void ts_flush(int tid, const u64* slot, u64* words)
{
    for (int v = tid; v < F_NV; v += F_NT) {
        Fix192 s = fix_zero();
        for (int g = 0; g < TS_LANES; g++) {
            const u64* lane = slot + (u64)3 * g * F_NV;
            Fix192 part = {lane[v], lane[F_NV + v], lane[2 * F_NV + v]};
            fix_add(s, part);
        }
        fix_flush(words, F_NV, v, s);
    }
}

#endif
