// Shared types and helpers of the whestbake CUDA sources (docs/ALGORITHM.md, `philox`).
//
// Every .cuh/.cu file here compiles two ways: as device code under NVRTC (the
// engine), and as host C++ under g++ with testdata/host/hostshim.h, which defines
// the CUDA intrinsics used below as correctly rounded host operations. The host
// build is how the arithmetic is checked bit for bit against the Go CPU twin on a
// machine without a GPU, so nothing here may use an intrinsic the shim lacks.
#ifndef WB_TYPES_CUH
#define WB_TYPES_CUH

typedef unsigned int u32;
typedef unsigned long long u64;

#ifndef WB_DEVICE
#define WB_DEVICE __device__ __forceinline__
#endif

WB_DEVICE int wb_min(int a, int b) { return a < b ? a : b; }

// relu of the forward contract: everything that is not > 0 (also -0 and NaN) becomes +0.
WB_DEVICE float wb_relu(float a) { return a > 0.0f ? a : 0.0f; }

WB_DEVICE float wb_f4get(const float4& v, int i)
{
    return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

#ifdef __CUDACC__
// Asynchronous 16-byte global->shared copies (sm_80+). The host shim copies at once,
// which is equivalent because every consumer waits for the copy behind a barrier.
WB_DEVICE void cp_async16(float* smem_dst, const float* gmem_src)
{
    unsigned s;
    asm("{ .reg .u64 a; cvta.to.shared.u64 a, %1; cvt.u32.u64 %0, a; }" : "=r"(s) : "l"(smem_dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem_src) : "memory");
}
WB_DEVICE void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
WB_DEVICE void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// x rounded to TF32, to nearest with ties away from zero, in a 32-bit word whose low 13
// bits are zero (PTX ISA, cvt.rna.tf32.f32; sm_80+).
WB_DEVICE unsigned wb_cvt_rna_tf32(float x)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}
#endif

#endif
