// mlp_tf32x3: the `philox` algorithm's inputs and statistics (tile.cuh, cta.cuh) with the
// forward pass on tensor cores in 3xTF32: bakeapi.PhiloxTF32x3Algorithm, docs/GPU.md
// "Precision tf32x3".
//
// Every operand is split into a big and a small TF32 part: big = x with its low 13 bits
// cleared (rounded toward zero), small = x − big (exact) rounded to TF32 to nearest, ties
// away (cvt.rna). The weights come split from the host (cudakernel.PackTF32Weights), the
// activations are split as they are loaded. For output (r, j) of a layer, acc = +0 and for
// each step of eight k, ascending: p = mma(0, small_x·big_w), p = mma(p, big_x·small_w),
// p = mma(p, big_x·big_w), acc = acc + p rounded to nearest. Each step starts from zero
// because the tensor core truncates what it adds into its accumulator: in place, over
// 256 terms, the truncations bias a relu network's means toward zero; a partial of eight
// k, added in FP32 with round-to-nearest, keeps FP32-class error (Ootomo and Yokota,
// arXiv:2203.03341). The result depends on the tensor core's summation, which NVIDIA does
// not document and which differs between architectures, so it is reproducible on one GPU
// architecture only; it does not depend on the tiling, the chunks or the grid.
//
// Fragments follow the PTX ISA's mma.m16n8k8 .tf32 layout (lane = 4·group + t): A holds
// (g, t), (g+8, t), (g, t+4), (g+8, t+4); B (k = t, n = g), (t+4, g); C and D (g, 2t),
// (g, 2t+1), (g+8, 2t), (g+8, 2t+1). The host harness replaces the mma by an emulation of
// that layout (testdata/host/tc_emulate.h, included through TC_EMULATE).

// The shape arrives as -DWB_W=... (cudakernel.TF32Shape.Defines).
#if !defined(WB_W) || !defined(WB_WP) || !defined(WB_D) || !defined(WB_TM) || !defined(WB_WM) || !defined(WB_WN) || !defined(WB_KS) || !defined(WB_LANES)
#error "mlp_tf32x3 needs -DWB_W -DWB_WP -DWB_D -DWB_TM -DWB_WM -DWB_WN -DWB_KS -DWB_LANES (cudakernel.TF32Shape.Defines)"
#endif
#define W WB_W   // network width
#define WP WB_WP // width padded to a multiple of 8·WN
#define D WB_D   // depth
#define TM WB_TM // samples per CTA tile
#define WM WB_WM // warps across the tile's rows
#define WN WB_WN // warps across its columns
#define KS WB_KS // weight rows per shared slice, a multiple of 8

// Rows of xs are WP + 4 floats apart, so that the eight rows an A fragment load reads at
// one column fall in distinct banks.
#define XS (WP + 4)
#define TS_LANES WB_LANES

#define F_NT (32 * WM * WN)     // threads per CTA
#define F_NV ((D + 1) * W)      // exact values: D·W layer sums, then W sums of squares
#define T_N8 (WP / 8)           // n8 tiles of a layer, and k8 steps
#define T_MI (TM / 16 / WM)     // m16 tiles per warp
#define T_NI (T_N8 / WN)        // n8 tiles per warp
#define T_KSTEPS (KS / 8)       // k8 steps per slice

#define TS_RESIDENT 0
#define TS_NS (WP / KS)
#define TS_SLICE16 (KS * WP / 2) // a weight is 8 bytes here: its big and its small part

#include "tile.cuh"

#ifndef TC_MI_MAX // the host harness sizes the outputs for its largest shape
#define TC_MI_MAX T_MI
#define TC_NI_MAX T_NI
#endif

// One thread's outputs: tile (i, j) of its warp's T_MI × T_NI, elements in the C layout.
struct TsAcc {
    float a[TC_MI_MAX][TC_NI_MAX][4];
};

WB_DEVICE void k_zero(TsAcc& f)
{
#pragma unroll
    for (int i = 0; i < T_MI; i++)
#pragma unroll
        for (int j = 0; j < T_NI; j++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                f.a[i][j][e] = 0.0f;
}

// x = big + small + (a rounding below 2^-21 of x): big is x cut to TF32 (its low 13 bits
// cleared), small the exact remainder rounded to TF32.
WB_DEVICE void tf32_split(float x, u32& big, u32& small)
{
    big = (u32)__float_as_int(x) & 0xffffe000u;
    small = wb_cvt_rna_tf32(__fsub_rn(x, __int_as_float((int)big)));
}

// A lane's registers of the m16k8 tile of xs at rows row0.., columns k0..: (g, t),
// (g+8, t), (g, t+4), (g+8, t+4), each split.
WB_DEVICE void tc_a_lane(u32 (&big)[4], u32 (&small)[4], const float* xs, int row0, int k0, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    const float* p = xs + (row0 + g) * XS + k0 + t;
    tf32_split(p[0], big[0], small[0]);
    tf32_split(p[8 * XS], big[1], small[1]);
    tf32_split(p[4], big[2], small[2]);
    tf32_split(p[8 * XS + 4], big[3], small[3]);
}

// A lane's registers of n8 tile n of k8 step s of a slice, as PackTF32Weights lays them
// out: one 16-byte word per lane, (k = t, n = g) and (t+4, g), big then small.
WB_DEVICE void tc_b_lane(u32 (&big)[2], u32 (&small)[2], const float* slice, int s, int n, int lane)
{
    const u32* p = (const u32*)slice + 4 * ((s * T_N8 + n) * 32 + lane);
    big[0] = p[0];
    big[1] = p[1];
    small[0] = p[2];
    small[1] = p[3];
}

#ifndef TC_EMULATE
struct TcA {
    u32 big[4], small[4];
};
struct TcB {
    u32 big[2], small[2];
};

WB_DEVICE void tc_load_a(TcA& a, const float* xs, int row0, int k0, int lane)
{
    tc_a_lane(a.big, a.small, xs, row0, k0, lane);
}

WB_DEVICE void tc_load_b(TcB& b, const float* slice, int s, int n, int lane)
{
    tc_b_lane(b.big, b.small, slice, s, n, lane);
}

// d = a·b + d for the warp's m16n8k8 tile, with the small or big parts.
template <bool ASmall, bool BSmall>
WB_DEVICE void tc_mma(float (&d)[4], const TcA& a, const TcB& b, int lane)
{
    (void)lane;
    const u32* x = ASmall ? a.small : a.big;
    const u32* y = BSmall ? b.small : b.big;
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(x[0]), "r"(x[1]), "r"(x[2]), "r"(x[3]), "r"(y[0]), "r"(y[1]));
}
#else
#include TC_EMULATE
#endif

// The slice's KS rows of k for the warp's tiles: per step of eight k, ascending, each
// output's partial from zero (small·big, big·small, big·big), then added to it rounded
// to nearest.
WB_DEVICE void k_slice(TsAcc& f, int tid, const float* xs, const float* buf, int slice)
{
    const int lane = tid & 31, warp = tid >> 5;
    const int row0 = (warp / WN) * T_MI * 16, n0 = (warp % WN) * T_NI;
#pragma unroll
    for (int s = 0; s < T_KSTEPS; s++) {
        TcA a[TC_MI_MAX];
#pragma unroll
        for (int i = 0; i < T_MI; i++)
            tc_load_a(a[i], xs, row0 + 16 * i, slice * KS + 8 * s, lane);
#pragma unroll
        for (int j = 0; j < T_NI; j++) {
            TcB b;
            tc_load_b(b, buf, s, n0 + j, lane);
#pragma unroll
            for (int i = 0; i < T_MI; i++) {
                float p[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                tc_mma<true, false>(p, a[i], b, lane);
                tc_mma<false, true>(p, a[i], b, lane);
                tc_mma<false, false>(p, a[i], b, lane);
#pragma unroll
                for (int e = 0; e < 4; e++)
                    f.a[i][j][e] = __fadd_rn(f.a[i][j][e], p[e]);
            }
        }
    }
}

// relu(outputs) into xs: the next layer's inputs, from the C layout.
WB_DEVICE void k_store(const TsAcc& f, int tid, float* xs)
{
    const int lane = tid & 31, warp = tid >> 5, g = lane >> 2, t = lane & 3;
    const int row0 = (warp / WN) * T_MI * 16, col0 = (warp % WN) * T_NI * 8;
#pragma unroll
    for (int i = 0; i < T_MI; i++)
#pragma unroll
        for (int j = 0; j < T_NI; j++) {
            float* p = xs + (row0 + 16 * i + g) * XS + col0 + 8 * j + 2 * t;
            p[0] = wb_relu(f.a[i][j][0]);
            p[1] = wb_relu(f.a[i][j][1]);
            p[8 * XS] = wb_relu(f.a[i][j][2]);
            p[8 * XS + 1] = wb_relu(f.a[i][j][3]);
        }
}

#include "cta.cuh"

#ifdef __CUDACC__
// weights: cudakernel.PackTF32Weights' D layers. key = k0 | k1 << 32. slots: gridDim.x CTA
// slots of 3·TS_LANES·F_NV words (scratch). words: the launch's carry-save totals, 6·F_NV,
// zeroed by the host. err: set on divergence.
extern "C" __global__ void __launch_bounds__(F_NT, 1)
mlp_tf32x3(const float* weights, u64 key, u64 first, u64 count, u64* slots, u64* words, u64* err)
{
    extern __shared__ float4 wb_smem[];
    float* xs = (float*)wb_smem;
    float* ws = xs + TM * XS;
    ts_cta((int)blockIdx.x, (int)gridDim.x, xs, ws, weights, (u32)key, (u32)(key >> 32), first, count,
           slots + (u64)blockIdx.x * 3 * TS_LANES * F_NV, words, err);
}
#endif
