// mlp_fused: the `philox` algorithm's whole forward pass and statistics in one kernel.
//
// A CTA takes tiles of TM consecutive samples (tile t, t + gridDim.x, ...), generates
// their inputs in shared memory, keeps them on chip through all D layers (xs, row-major,
// WP floats per row) while weight rows stream through a double-buffered shared slice of
// KS rows (cp.async), or, when every layer fits (WB_RESIDENT), sit in shared memory for
// the whole launch, and after each layer adds the 32-row tile sums of every column to
// the CTA's exact slot (tile.cuh, cta.cuh). At the end the slot is added to the launch
// totals with integer atomics. Bits never depend on TM, RT, CT, KS, residency or the grid:
// each output is one fma chain over ascending k from +0 (the padding columns W..WP-1 hold
// zeros and come after every real term, so they add +0), each 32-row sum is sequential,
// and tiles combine exactly.

// The shape arrives as -DWB_W=... (cudakernel.FusedShape.Defines); prefixed because -D
// macros also reach NVRTC's built-in headers, where a bare W or D could be a name.
#if !defined(WB_W) || !defined(WB_WP) || !defined(WB_D) || !defined(WB_TM) || !defined(WB_RT) || !defined(WB_CT) || !defined(WB_KS) || !defined(WB_LANES)
#error "mlp_fused needs -DWB_W -DWB_WP -DWB_D -DWB_TM -DWB_RT -DWB_CT -DWB_KS -DWB_LANES (cudakernel.FusedShape.Defines)"
#endif
#define W WB_W   // network width
#define WP WB_WP // width padded to a multiple of CT
#define D WB_D   // depth
#define TM WB_TM // samples per CTA tile
#define RT WB_RT // rows per thread
#define CT WB_CT // columns per thread
#define KS WB_KS // weight rows per shared slice

#define XS WP                    // row stride of xs
#define TS_LANES WB_LANES        // slot lanes per value (FusedShape.Lanes)

#define F_TX (WP / CT)           // threads across the columns
#define F_NT (F_TX * (TM / RT))  // threads per CTA
#define F_NV ((D + 1) * W)       // exact values: D·W layer sums, then W sums of squares
#define F_NS (WP / KS)           // weight slices per layer

// With WB_RESIDENT the D layers' weights are copied into shared memory once per launch
// (FusedShape.Resident: when they fit beside the tile), which leaves no copy and no
// barrier inside a layer.
#ifndef WB_RESIDENT
#define WB_RESIDENT 0
#endif
#define TS_RESIDENT WB_RESIDENT
#define TS_NS F_NS
#define TS_SLICE16 (KS * WP / 4)

#include "tile.cuh"

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

// One thread's outputs: rows ty·RT + i, columns 4·tx + 4·F_TX·m + e (j = 4m + e), so a
// quarter warp reads and writes 128 contiguous bytes of a shared row.
struct TsAcc {
    float a[FRAG_RT][FRAG_CT];
};

WB_DEVICE void k_zero(TsAcc& f)
{
#pragma unroll
    for (int i = 0; i < RT; i++)
#pragma unroll
        for (int j = 0; j < CT; j++)
            f.a[i][j] = 0.0f;
}

WB_DEVICE int frag_col(int tx, int j) { return 4 * tx + 4 * F_TX * (j / 4) + j % 4; }

// acc = fma(x[r][k], w[k][c], acc) for the KS values of k of the layer's slice `slice`
// (from k0 = slice·KS), ascending. The body (4 values of k, 4·RT·CT fmas) is unrolled, the
// loop over the slice WB_KU times (FusedShape.KU: code size against loop edges, measured).
WB_DEVICE void k_slice(TsAcc& f, int tid, const float* xs, const float* buf, int slice)
{
    const int tx = tid % F_TX, ty = tid / F_TX, k0 = slice * KS;
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
WB_DEVICE void k_store(const TsAcc& f, int tid, float* xs)
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

#include "cta.cuh"

#ifdef __CUDACC__
// weights: D padded layers of WP×WP (row k, column c at k·WP + c), zero outside W×W.
// key = k0 | k1 << 32. slots: gridDim.x CTA slots of 3·TS_LANES·F_NV words (scratch).
// words: the launch's carry-save totals, 6·F_NV, zeroed by the host. err: set on divergence.
extern "C" __global__ void __launch_bounds__(F_NT, 1)
mlp_fused(const float* weights, u64 key, u64 first, u64 count, u64* slots, u64* words, u64* err)
{
    extern __shared__ float4 wb_smem[];
    float* xs = (float*)wb_smem;
    float* ws = xs + TM * WP;
    ts_cta((int)blockIdx.x, (int)gridDim.x, xs, ws, weights, (u32)key, (u32)(key >> 32), first, count,
           slots + (u64)blockIdx.x * 3 * TS_LANES * F_NV, words, err);
}
#endif
