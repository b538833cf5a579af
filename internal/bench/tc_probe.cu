// Device probes of the ceilings the fused kernels run against (docs/GPU.md, "The acceptance
// run"): gpu-acceptance.sh builds it with nvcc -O3 -arch=sm_XY and runs it with a file for the
// tiles. Prints: (1) the FFMA rate of mlp_fused's 8x16 register fragment (8 warps/SM, 255
// registers) and of a 4x16 one (16 warps/SM), without and with LDS.128 operand loads at the
// kernel's ratio (24 per 512 FFMA); (2) raw mma.sync throughput (TF32 m16n8k8, BF16 m16n8k16) at
// 4/8/16 warps/SM; (3) the TF32 mma.sync's numerics: truncation, guard bit, which k share one
// sum, C in the sum, row independence; with a file argument, 1024 random tiles (A, B, C, D) for
// fitting the tensor-core summation model of cudakernel's tf32x3 tests (tcModel) offline.
// The fragment layout is the PTX ISA's mma.m16n8k8 .tf32 one; the numerics tests follow Fasi,
// Higham, Mikaitis and Pranesh, "Numerical behavior of NVIDIA tensor cores" (PeerJ Comput. Sci.
// 7:e330, 2021).
#include <cstdio>
#include <cstring>
#include <cmath>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("CUDA %s at %d\n", cudaGetErrorString(e), __LINE__); return 1; } } while (0)

// (1) 8x16 outer-product FFMA loop, ascending k, as in mlp_fused's fused_mma.
template <bool LDS, int RT>
__global__ void __launch_bounds__(256, 8 / RT) ffma_probe(float* out, int iters, float s)
{
    __shared__ float4 sm[2][16 * 8 * 4 + 4 * 64 + 64];
    float acc[RT][16];
#pragma unroll
    for (int i = 0; i < RT; i++)
#pragma unroll
        for (int j = 0; j < 16; j++) acc[i][j] = 0.f;
    for (int i = threadIdx.x; i < (int)(sizeof(sm) / 16); i += blockDim.x)
        ((float4*)sm)[i] = make_float4(s, s * 0.5f, s * 0.25f, s * 0.125f);
    __syncthreads();
    float x[RT], w[16];
    float4 xv[RT];
#pragma unroll
    for (int i = 0; i < RT; i++) x[i] = s * (i + 1);
#pragma unroll
    for (int j = 0; j < 16; j++) w[j] = s * (j + 2);
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    for (int it = 0; it < iters; it++) {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            if (LDS) {
                if (q == 0) {
#pragma unroll
                    for (int i = 0; i < RT; i++) xv[i] = sm[it & 1][(ty * 8 + i) * 4 + (it & 3)];
                }
#pragma unroll
                for (int i = 0; i < RT; i++) x[i] = q == 0 ? xv[i].x : q == 1 ? xv[i].y : q == 2 ? xv[i].z : xv[i].w;
#pragma unroll
                for (int m = 0; m < 4; m++) { float4 t = sm[it & 1][512 + q * 64 + tx + 16 * m]; w[4*m] = t.x; w[4*m+1] = t.y; w[4*m+2] = t.z; w[4*m+3] = t.w; }
            }
#pragma unroll
            for (int i = 0; i < RT; i++)
#pragma unroll
                for (int j = 0; j < 16; j++) acc[i][j] = __fmaf_rn(x[i], w[j], acc[i][j]);
        }
    }
    float r = 0.f;
#pragma unroll
    for (int i = 0; i < RT; i++)
#pragma unroll
        for (int j = 0; j < 16; j++) r += acc[i][j];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}

__device__ __forceinline__ void mma_tf32(float* d, const unsigned* a, const unsigned* b)
{
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_bf16(float* d, const unsigned* a, const unsigned* b)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// (2) NC independent accumulator tiles per warp, so the MMAs can pipeline.
template <bool BF16, int NC>
__global__ void mma_probe(float* out, int iters)
{
    unsigned a[4], b[2];
    for (int i = 0; i < 4; i++) a[i] = 0x3f800000u + threadIdx.x * 8192u * (i + 1);
    for (int i = 0; i < 2; i++) b[i] = 0x3c000000u + threadIdx.x * 8192u * (i + 3);
    float d[NC][4];
    for (int c = 0; c < NC; c++) for (int i = 0; i < 4; i++) d[c][i] = 0.f;
    for (int it = 0; it < iters; it++)
#pragma unroll
        for (int c = 0; c < NC; c++) { if (BF16) mma_bf16(d[c], a, b); else mma_tf32(d[c], a, b); }
    float r = 0.f;
    for (int c = 0; c < NC; c++) for (int i = 0; i < 4; i++) r += d[c][i];
    out[blockIdx.x * blockDim.x + threadIdx.x] = r;
}

// (3) one m16n8k8 TF32 MMA on full matrices A[16][8], B[8][8] (row k, col n), C[16][8].
__device__ void mma_once_dev(const float* A, const float* B, const float* C, float* D)
{
    int l = threadIdx.x, g = l >> 2, t = l & 3;
    unsigned a[4] = {__float_as_uint(A[g * 8 + t]), __float_as_uint(A[(g + 8) * 8 + t]),
                     __float_as_uint(A[g * 8 + t + 4]), __float_as_uint(A[(g + 8) * 8 + t + 4])};
    unsigned b[2] = {__float_as_uint(B[t * 8 + g]), __float_as_uint(B[(t + 4) * 8 + g])};
    float d[4] = {C[g * 8 + 2 * t], C[g * 8 + 2 * t + 1], C[(g + 8) * 8 + 2 * t], C[(g + 8) * 8 + 2 * t + 1]};
    mma_tf32(d, a, b);
    D[g * 8 + 2 * t] = d[0]; D[g * 8 + 2 * t + 1] = d[1]; D[(g + 8) * 8 + 2 * t] = d[2]; D[(g + 8) * 8 + 2 * t + 1] = d[3];
}
__global__ void mma_once(const float* A, const float* B, const float* C, float* D) { mma_once_dev(A, B, C, D); }

// (3b) many tiles at once, for fitting a CPU model of the accumulation offline.
__global__ void mma_batch(const float* A, const float* B, const float* C, float* D)
{
    const int w = blockIdx.x;
    mma_once_dev(A + w * 128, B + w * 64, C + w * 128, D + w * 128);
}

static float *dA, *dB, *dC, *dD;
static float hA[128], hB[64], hC[128], hD[128];
// D[0][0] for row 0 of A = a, column 0 of B = b, C[0][0] = c; everything else zero.
static float once(const float* a, const float* b, float c)
{
    memset(hA, 0, sizeof hA); memset(hB, 0, sizeof hB); memset(hC, 0, sizeof hC);
    for (int k = 0; k < 8; k++) { hA[k] = a[k]; hB[k * 8] = b[k]; }
    hC[0] = c;
    cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice); cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice);
    cudaMemcpy(dC, hC, sizeof hC, cudaMemcpyHostToDevice);
    mma_once<<<1, 32>>>(dA, dB, dC, dD);
    cudaMemcpy(hD, dD, sizeof hD, cudaMemcpyDeviceToHost);
    return hD[0];
}

template <typename K, typename... Args>
static double tflops(K kern, int blocks, int threads, double flop, Args... args)
{
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    kern<<<blocks, threads>>>(args...);
    cudaEventRecord(e0); kern<<<blocks, threads>>>(args...); cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    return flop / (ms * 1e-3) / 1e12;
}

int main(int argc, char** argv)
{
    int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    float* out; CK(cudaMalloc(&out, 64 << 20));
    const int it = 20000;
    {
        double f8 = 2.0 * 128 * 4 * it * 256.0 * sms, f4 = f8;   // RT=4: 2 CTAs/SM, half the fmas each
        printf("FFMA 8x16/thread,  8 warps/SM: no LDS %.1f, LDS.128 24:512 %.1f TFLOP/s\n",
               tflops(ffma_probe<false, 8>, sms, 256, f8, out, it, 1e-9f), tflops(ffma_probe<true, 8>, sms, 256, f8, out, it, 1e-9f));
        printf("FFMA 4x16/thread, 16 warps/SM: no LDS %.1f, LDS.128 20:256 %.1f TFLOP/s\n",
               tflops(ffma_probe<false, 4>, 2 * sms, 256, f4, out, it, 1e-9f), tflops(ffma_probe<true, 4>, 2 * sms, 256, f4, out, it, 1e-9f));
    }
    for (int w = 4; w <= 16; w *= 2) {
        double ft = 2.0 * 16 * 8 * 8 * 8 * it * (w * 32.0 / 32) * sms, fb = ft * 2;
        printf("mma.sync raw, %2d warps/SM, 8 tiles/warp: TF32 m16n8k8 %.0f TFLOP/s, BF16 m16n8k16 %.0f TFLOP/s\n", w,
               tflops(mma_probe<false, 8>, sms, w * 32, ft, out, it), tflops(mma_probe<true, 8>, sms, w * 32, fb, out, it));
    }
    CK(cudaMalloc(&dA, 512)); CK(cudaMalloc(&dB, 512)); CK(cudaMalloc(&dC, 512)); CK(cudaMalloc(&dD, 512));
    const float u = ldexpf(1.f, -24);
    float a[8], b[8];
    for (int k = 0; k < 8; k++) a[k] = 1.f;
    memset(b, 0, sizeof b); b[0] = 1.5f * u;   // 1 + 0.75 ulp(1)
    printf("TF32 mma: 1 + 0.75ulp -> %s\n", once(a, b, 1.f) == 1.f ? "1 (truncated: RZ)" : "1+ulp (rounded up)");
    b[0] = -1.5f * u;
    printf("TF32 mma: -1 - 0.75ulp -> %s\n", once(a, b, -1.f) == -1.f ? "-1 (RZ)" : "-1-ulp");
    memset(b, 0, sizeof b); b[0] = u; b[1] = u;   // 1 + u + u: exact 1+2u needs a guard bit and one sum
    bool guard = once(a, b, 1.f) != 1.f;
    printf("TF32 mma: 1 + u@k0 + u@k1 = %s\n", guard ? "1+2u (guard bit, one sum)" : "1 (no guard bit or separate sums)");
    for (int j = 2; guard && j < 8; j++) {   // which k share that sum?
        memset(b, 0, sizeof b); b[0] = u; b[j] = u;
        printf("TF32 mma: 1 + u@k0 + u@k%d = %s\n", j, once(a, b, 1.f) == 1.f ? "1 (separate sums)" : "1+2u (one sum)");
    }
    memset(b, 0, sizeof b); b[0] = 1.f; b[1] = u;
    printf("TF32 mma: C=u, products 1 and u: %s\n", once(a, b, u) == 1.f ? "1 (C added separately)" : "1+2u (C in the sum)");
    memset(b, 0, sizeof b); b[0] = 1.f;
    a[0] = 1.f; float big = once(a, b, -(1.f - u));   // 1*1 - (1-2^-24): needs one alignment bit below ulp
    printf("TF32 mma: 1 - (1-2^-24) = %g (2^-24 if extra alignment bits)\n", big);
    // row independence: the same row 0 with random other rows
    for (int k = 0; k < 8; k++) { a[k] = 1.f + k * 0.125f; b[k] = 0.3f + 0.01f * k; }
    float ref = once(a, b, 0.7f), dif = 0.f;
    for (int r = 1; r < 16; r++) for (int k = 0; k < 8; k++) hA[r * 8 + k] = (float)((r * 37 + k * 11) % 17) - 8.f;
    cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice); mma_once<<<1, 32>>>(dA, dB, dC, dD);
    cudaMemcpy(hD, dD, sizeof hD, cudaMemcpyDeviceToHost); dif = hD[0] - ref;
    printf("TF32 mma: row 0 result independent of other rows: %s\n", dif == 0.f ? "yes" : "NO");
    if (argc > 1) {   // random tiles: tf32 A, B with spread exponents, fp32 C; file = A,B,C,D per tile
        const int nt = 1024, per = 128 + 64 + 128 + 128;
        float* h = new float[nt * per];
        unsigned x = 12345u;
        auto rnd = [&]() { x = x * 1664525u + 1013904223u; return x; };
        auto val = [&](bool tf32) {
            unsigned r = rnd(); float v = ldexpf((float)(r >> 8) / 16777216.f + 0.5f, (int)(rnd() % 24) - 12) * ((r & 1) ? -1.f : 1.f);
            unsigned bits; memcpy(&bits, &v, 4); if (tf32) bits &= ~0x1fffu; memcpy(&v, &bits, 4); return v; };
        for (int t = 0; t < nt; t++) { float* p = h + t * per; for (int i = 0; i < 192; i++) p[i] = val(true); for (int i = 192; i < 320; i++) p[i] = val(false); }
        float *gA, *gB, *gC, *gD; CK(cudaMalloc(&gA, nt * 512)); CK(cudaMalloc(&gB, nt * 256)); CK(cudaMalloc(&gC, nt * 512)); CK(cudaMalloc(&gD, nt * 512));
        float *A = new float[nt * 128], *B = new float[nt * 64], *C = new float[nt * 128], *D = new float[nt * 128];
        for (int t = 0; t < nt; t++) { memcpy(A + t * 128, h + t * per, 512); memcpy(B + t * 64, h + t * per + 128, 256); memcpy(C + t * 128, h + t * per + 192, 512); }
        cudaMemcpy(gA, A, nt * 512, cudaMemcpyHostToDevice); cudaMemcpy(gB, B, nt * 256, cudaMemcpyHostToDevice); cudaMemcpy(gC, C, nt * 512, cudaMemcpyHostToDevice);
        mma_batch<<<nt, 32>>>(gA, gB, gC, gD); CK(cudaMemcpy(D, gD, nt * 512, cudaMemcpyDeviceToHost));
        for (int t = 0; t < nt; t++) memcpy(h + t * per + 320, D + t * 128, 512);
        FILE* f = fopen(argv[1], "wb"); fwrite(h, 4, (size_t)nt * per, f); fclose(f);
        printf("wrote %d random m16n8k8 tiles (A[16][8], B[8][8] k-major rows, C[16][8], D[16][8]) to %s\n", nt, argv[1]);
    }
    return 0;
}
