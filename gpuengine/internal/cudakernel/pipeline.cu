// Helper kernels of the cuBLAS pipeline (and of its bit-exact reference variant):
// per chunk of `rows` samples, gen_inputs fills x, then per layer a GEMM (cublasSgemm,
// or layer_reference: the forward contract's fma chain) writes the pre-activations and
// relu_tilesum applies relu in place and adds the 32-row tile sums to the launch totals.
// Rows ≥ valid (the padding of the last chunk, which keeps the GEMM shape fixed) are
// zero inputs and are never summed.
//
// Each kernel's work is a __device__ function of (item or column, ...) so the host
// harness (testdata/host) can run it with the same code.
#include "philox.cuh"
#include "fixed.cuh"
#include "forward.cuh"

#if !defined(WB_W) || !defined(WB_D)
#error "the pipeline kernels need -DWB_W -DWB_D (cudakernel.PipelineShape.Defines)"
#endif
#define W WB_W // network width
#define D WB_D // depth

#define P_NV ((D + 1) * W)        // exact values: D·W layer sums, then W sums of squares
#define P_TILES_PER_CTA 32        // 32-row tiles summed by one relu_tilesum thread
#define P_COLS_PER_CTA 128        // relu_tilesum threads per CTA (one per column)

// Item i of the rows × ⌈W/4⌉ Philox blocks of a chunk starting at sample `first`.
WB_DEVICE void gen_inputs_item(float* x, u64 i, u64 first, u64 valid, u32 k0, u32 k1)
{
    const u64 nb = (W + 3) / 4;
    const u64 r = i / nb;
    const u32 b = (u32)(i - r * nb);
    float4 z = philox_inputs4(first + r, b, k0, k1, W, r < valid);
    const int j = 4 * (int)b;
    float* row = x + r * W + j;
    row[0] = z.x;
    if (j + 1 < W) row[1] = z.y;
    if (j + 2 < W) row[2] = z.z;
    if (j + 3 < W) row[3] = z.w;
}

// Output i = r·W + c of one layer before relu: x and y are rows×W, w is W×W row-major.
WB_DEVICE void layer_reference_item(float* y, const float* x, const float* w, u64 i)
{
    const u64 r = i / W, c = i - r * W;
    y[i] = dot_fma(x + r * W, w + c, W, W);
}

// Column c of layer l over the 32-row tiles of group g: relu in place, then the tile sums.
WB_DEVICE void relu_tilesum_column(float* x, int c, u64 g, u64 rows, u64 valid, int l, u64* words, u64* err)
{
    if (c >= W)
        return;
    const bool last = l == D - 1;
    bool bad = false;
    Fix192 s = fix_zero(), q = fix_zero();
    for (int b = 0; b < P_TILES_PER_CTA; b++) {
        const u64 r0 = (g * P_TILES_PER_CTA + b) * WB_TILE;
        if (r0 >= rows)
            break;
        float* col = x + r0 * W + c;
        const int n = rows - r0 < WB_TILE ? (int)(rows - r0) : WB_TILE;
        for (int r = 0; r < n; r++)
            col[(u64)r * W] = wb_relu(col[(u64)r * W]);
        if (r0 < valid) {
            double t, sq;
            tile_column_sums(col, W, valid - r0 < WB_TILE ? (int)(valid - r0) : WB_TILE, last, t, sq);
            fix_add(s, fix_from_double(t, bad));
            if (last)
                fix_add(q, fix_from_double(sq, bad));
        }
    }
    fix_flush(words, P_NV, l * W + c, s);
    if (last)
        fix_flush(words, P_NV, D * W + c, q);
    if (bad)
        atomicOr(err, 1ull);
}

#ifdef __CUDACC__
// All scalar parameters are 64-bit: gorgonia's Launch copies 8 bytes per parameter.
extern "C" __global__ void gen_inputs(float* x, u64 rows, u64 key, u64 first, u64 valid)
{
    const u64 n = rows * ((W + 3) / 4);
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (u64)gridDim.x * blockDim.x)
        gen_inputs_item(x, i, first, valid, (u32)key, (u32)(key >> 32));
}

extern "C" __global__ void layer_reference(float* y, const float* x, const float* w, u64 rows)
{
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < rows * W; i += (u64)gridDim.x * blockDim.x)
        layer_reference_item(y, x, w, i);
}

// grid (⌈W/P_COLS_PER_CTA⌉, ⌈rows/(32·P_TILES_PER_CTA)⌉), P_COLS_PER_CTA threads.
extern "C" __global__ void relu_tilesum(float* x, u64 rows, u64 valid, u64 layer, u64* words, u64* err)
{
    relu_tilesum_column(x, (int)(blockIdx.x * blockDim.x + threadIdx.x), (u64)blockIdx.y, rows, valid, (int)layer,
                        words, err);
}
#endif
