// mlp_fused: the `philox` algorithm's whole forward pass and statistics in one kernel.
//
// A CTA takes tiles of TM consecutive samples (tile t, t + gridDim.x, ...), generates
// their inputs in shared memory, keeps them on chip through all D layers (xs, row-major,
// WP floats per row) while weight rows stream through a double-buffered shared slice of
// KS rows (cp.async), and after each layer adds the 32-row tile sums of every column to
// the CTA's exact slot. At the end the slot is added to the launch totals with integer
// atomics. Bits never depend on TM, RT, CT, KS or the grid: each output is one fma chain
// over ascending k from +0 (the padding columns W..WP-1 hold zeros and come after every
// real term, so they add +0), each 32-row sum is sequential, and tiles combine exactly.
//
// The tile is written as phases separated by barriers. FUSED_PHASE runs its statements as
// thread `tid`; the host harness (testdata/host) defines it as a loop over all tids and
// the barriers as no-ops, which executes this very code sequentially on a CPU.
#include "philox.cuh"
#include "fixed.cuh"

// The shape arrives as -DWB_W=... (cudakernel.FusedShape.Defines); prefixed because -D
// macros also reach NVRTC's built-in headers, where a bare W or D could be a name.
#if !defined(WB_W) || !defined(WB_WP) || !defined(WB_D) || !defined(WB_TM) || !defined(WB_RT) || !defined(WB_CT) || !defined(WB_KS)
#error "mlp_fused needs -DWB_W -DWB_WP -DWB_D -DWB_TM -DWB_RT -DWB_CT -DWB_KS (cudakernel.FusedShape.Defines)"
#endif
#define W WB_W   // network width
#define WP WB_WP // width padded to a multiple of CT
#define D WB_D   // depth
#define TM WB_TM // samples per CTA tile
#define RT WB_RT // rows per thread
#define CT WB_CT // columns per thread
#define KS WB_KS // weight rows per shared slice

#define F_TX (WP / CT)           // threads across the columns
#define F_NT (F_TX * (TM / RT))  // threads per CTA
#define F_NV ((D + 1) * W)       // exact values: D·W layer sums, then W sums of squares
#define F_NS (WP / KS)           // weight slices per layer

// Steps of four k unrolled together in the slice loop (FusedShape.KU; 1: none). Like the
// tiling it moves no fma: the chain per output stays ascending in k.
#ifndef WB_KU
#define WB_KU 1
#endif
#define WB_PRAGMA_(x) _Pragma(#x)
#define WB_UNROLL(n) WB_PRAGMA_(unroll n)

#ifndef FRAG_RT // the host harness sizes fragments for its largest shape
#define FRAG_RT RT
#define FRAG_CT CT
#endif

#ifndef FUSED_PHASE
#define FUSED_PHASE(...) do { const int tid = (int)threadIdx.x; __VA_ARGS__; } while (0)
#define FUSED_SYNC() __syncthreads()
#define FUSED_SYNC_ASYNC() do { cp_async_wait_all(); __syncthreads(); } while (0)
#define FRAG_DECL Frag frag_
#define FRAG(tid) ((void)(tid), frag_)
#endif

// One thread's outputs: rows ty·RT + i, columns 4·tx + 4·F_TX·m + e (j = 4m + e), so a
// quarter warp reads and writes 128 contiguous bytes of a shared row.
struct Frag {
    float a[FRAG_RT][FRAG_CT];
};

WB_DEVICE void frag_zero(Frag& f)
{
#pragma unroll
    for (int i = 0; i < RT; i++)
#pragma unroll
        for (int j = 0; j < CT; j++)
            f.a[i][j] = 0.0f;
}

WB_DEVICE int frag_col(int tx, int j) { return 4 * tx + 4 * F_TX * (j / 4) + j % 4; }

// Inputs of samples first..first+TM-1 into xs; rows ≥ valid and columns ≥ W are zero.
WB_DEVICE void fused_inputs(int tid, float* xs, u64 first, int valid, u32 k0, u32 k1)
{
    const int nb = WP / 4;
    for (int i = tid; i < TM * nb; i += F_NT) {
        int r = i / nb, b = i - r * nb;
        *(float4*)&xs[r * WP + 4 * b] = philox_inputs4(first + (u64)r, (u32)b, k0, k1, W, r < valid);
    }
}

#define F_CP (KS * WP / 4)              // 16-byte copies per slice
#define F_CP_ROUNDS ((F_CP + F_NT - 1) / F_NT) // copies per thread, at most

// Starts copying slice g (layer g / F_NS, weight rows (g % F_NS)·KS ...) into buf. The
// trip count is a constant, so the loop unrolls into F_CP_ROUNDS copies with no loop or
// bounds code when F_NT divides F_CP (every production shape).
WB_DEVICE void fused_issue(int tid, float* buf, const float* weights, int g)
{
    const float* src = weights + (u64)(g / F_NS) * WP * WP + (u64)(g % F_NS) * KS * WP;
#pragma unroll
    for (int r = 0; r < F_CP_ROUNDS; r++) {
        const int i = tid + r * F_NT;
        if (F_CP % F_NT == 0 || i < F_CP)
            cp_async16(buf + 4 * i, src + 4 * i);
    }
    cp_async_commit();
}

// acc = fma(x[r][k], w[k][c], acc) for the slice's KS values of k, ascending. The body
// (4 values of k, 4·RT·CT fmas) is unrolled, the loop over the slice only WB_KU times: a
// fully unrolled KS=16 slice would be 2048 FFMAs (32 KiB of code) per warp and crowd the
// instruction cache.
WB_DEVICE void fused_mma(Frag& f, int tid, const float* xs, const float* buf, int k0)
{
    const int tx = tid % F_TX, ty = tid / F_TX;
    WB_UNROLL(WB_KU)
    for (int kk = 0; kk < KS; kk += 4) {
        float4 xv[FRAG_RT];
#pragma unroll
        for (int i = 0; i < RT; i++)
            xv[i] = *(const float4*)&xs[(ty * RT + i) * WP + k0 + kk];
#pragma unroll
        for (int q = 0; q < 4; q++) {
            float wv[FRAG_CT];
#pragma unroll
            for (int m = 0; m < CT / 4; m++) {
                float4 t = *(const float4*)&buf[(kk + q) * WP + 4 * tx + 4 * F_TX * m];
                wv[4 * m] = t.x;
                wv[4 * m + 1] = t.y;
                wv[4 * m + 2] = t.z;
                wv[4 * m + 3] = t.w;
            }
#pragma unroll
            for (int i = 0; i < RT; i++) {
                float xi = wb_f4get(xv[i], q);
#pragma unroll
                for (int j = 0; j < CT; j++)
                    f.a[i][j] = __fmaf_rn(xi, wv[j], f.a[i][j]);
            }
        }
    }
}

// relu(outputs) into xs: the next layer's inputs.
WB_DEVICE void fused_store(const Frag& f, int tid, float* xs)
{
    const int tx = tid % F_TX, ty = tid / F_TX;
#pragma unroll
    for (int i = 0; i < RT; i++)
#pragma unroll
        for (int m = 0; m < CT / 4; m++) {
            float4 o = {wb_relu(f.a[i][4 * m]), wb_relu(f.a[i][4 * m + 1]), wb_relu(f.a[i][4 * m + 2]), wb_relu(f.a[i][4 * m + 3])};
            *(float4*)&xs[(ty * RT + i) * WP + frag_col(tx, 4 * m)] = o;
        }
}

// The CTA's slot holds one Fix192 per value, limb k of value v at k·F_NV + v. Value v of
// column c is always handled by thread c mod F_NT, so the slot needs no synchronisation.
WB_DEVICE void slot_add(u64* slot, int v, const Fix192& s)
{
    Fix192 cur = {slot[v], slot[F_NV + v], slot[2 * F_NV + v]};
    fix_add(cur, s);
    slot[v] = cur.w0;
    slot[F_NV + v] = cur.w1;
    slot[2 * F_NV + v] = cur.w2;
}

// Layer l's tile sums of every column (and, at the last layer, of the squares) into the slot.
WB_DEVICE void fused_colsums(int tid, const float* xs, int l, int valid, u64* slot, u64* err)
{
    const bool last = l == D - 1;
    bool bad = false;
    for (int c = tid; c < W; c += F_NT) {
        Fix192 s = fix_zero(), q = fix_zero();
        for (int r0 = 0; r0 < valid; r0 += WB_TILE) {
            double t, sq;
            tile_column_sums(xs + r0 * WP + c, WP, wb_min(WB_TILE, valid - r0), last, t, sq);
            fix_add(s, fix_from_double(t, bad));
            if (last)
                fix_add(q, fix_from_double(sq, bad));
        }
        slot_add(slot, l * W + c, s);
        if (last)
            slot_add(slot, D * W + c, q);
    }
    if (bad)
        atomicOr(err, 1ull);
}

WB_DEVICE void fused_slot_zero(int tid, u64* slot)
{
    for (int c = tid; c < W; c += F_NT)
        for (int l = 0; l <= D; l++)
            for (int k = 0; k < 3; k++)
                slot[k * F_NV + l * W + c] = 0ull;
}

WB_DEVICE void fused_flush(int tid, const u64* slot, u64* words)
{
    for (int c = tid; c < W; c += F_NT)
        for (int l = 0; l <= D; l++) {
            int v = l * W + c;
            Fix192 s = {slot[v], slot[F_NV + v], slot[2 * F_NV + v]};
            fix_flush(words, F_NV, v, s);
        }
}

// One CTA's share of samples [first, first+count): tiles cta, cta+ncta, ...
WB_DEVICE void fused_cta(int cta, int ncta, float* xs, float* ws, const float* weights, u32 k0, u32 k1,
                         u64 first, u64 count, u64* slot, u64* words, u64* err)
{
    FRAG_DECL;
    FUSED_PHASE(fused_slot_zero(tid, slot));
    const u64 ntiles = (count + TM - 1) / TM;
    for (u64 t = (u64)cta; t < ntiles; t += (u64)ncta) {
        const u64 left = count - t * TM;
        const int valid = left < (u64)TM ? (int)left : TM;
        FUSED_SYNC(); // the previous tile's column sums are done with xs
        FUSED_PHASE(fused_inputs(tid, xs, first + t * TM, valid, k0, k1); fused_issue(tid, ws, weights, 0));
        FUSED_SYNC_ASYNC();
        // Slice g = l·F_NS + k of the weights. The fragment is zeroed once per layer,
        // outside the slice loop: zeroing it under `if (k == 0)` inside cost 128 FSEL a
        // slice (ptxas selects rather than branches), 5% of the kernel's instructions.
        for (int l = 0; l < D; l++) {
            FUSED_PHASE(frag_zero(FRAG(tid)));
            for (int k = 0; k < F_NS; k++) {
                const int g = l * F_NS + k;
                FUSED_PHASE(
                    if (g + 1 < D * F_NS) fused_issue(tid, ws + ((g + 1) & 1) * KS * WP, weights, g + 1);
                    fused_mma(FRAG(tid), tid, xs, ws + (g & 1) * KS * WP, k * KS));
                FUSED_SYNC_ASYNC(); // slice g+1 has landed and every thread is done with xs
            }
            FUSED_PHASE(fused_store(FRAG(tid), tid, xs));
            FUSED_SYNC();
            FUSED_PHASE(fused_colsums(tid, xs, l, valid, slot, err));
        }
    }
    FUSED_PHASE(fused_flush(tid, slot, words));
}

#ifdef __CUDACC__
// weights: D padded layers of WP×WP (row k, column c at k·WP + c), zero outside W×W.
// key = k0 | k1 << 32. slots: gridDim.x CTA slots of 3·F_NV words (scratch).
// words: the launch's carry-save totals, 6·F_NV, zeroed by the host. err: set on divergence.
extern "C" __global__ void __launch_bounds__(F_NT, 1)
mlp_fused(const float* weights, u64 key, u64 first, u64 count, u64* slots, u64* words, u64* err)
{
    extern __shared__ float4 wb_smem[];
    float* xs = (float*)wb_smem;
    float* ws = xs + TM * WP;
    fused_cta((int)blockIdx.x, (int)gridDim.x, xs, ws, weights, (u32)key, (u32)(key >> 32), first, count,
              slots + (u64)blockIdx.x * 3 * F_NV, words, err);
}
#endif
