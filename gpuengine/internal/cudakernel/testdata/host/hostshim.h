// Host definitions of the CUDA built-ins the kernel sources use, so that they compile
// with g++ (-ffp-contract=off, no -ffast-math, SSE arithmetic: every float and double
// operation below is one IEEE operation rounded to nearest even, like its _rn intrinsic).
#ifndef WB_HOSTSHIM_H
#define WB_HOSTSHIM_H
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#define __device__
#define __forceinline__ inline

struct alignas(16) float4 {
    float x, y, z, w;
};

inline unsigned __umulhi(unsigned a, unsigned b) { return (unsigned)(((unsigned long long)a * b) >> 32); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }

inline float __fmul_rn(float a, float b) { return a * b; }
inline float __fadd_rn(float a, float b) { return a + b; }
inline float __fsub_rn(float a, float b) { return a - b; }
inline float __fdiv_rn(float a, float b) { return a / b; }
inline float __fsqrt_rn(float a) { return std::sqrt(a); }
inline float __fmaf_rn(float a, float b, float c) { return std::fmaf(a, b, c); }
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dmul_rn(double a, double b) { return a * b; }

inline float __ll2float_rn(long long x) { return (float)x; }
inline float __ull2float_rn(unsigned long long x) { return (float)x; }
inline float __uint2float_rn(unsigned x) { return (float)x; }
inline float __int2float_rn(int x) { return (float)x; }

inline float __int_as_float(int x)
{
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}
inline int __float_as_int(float f)
{
    int x;
    std::memcpy(&x, &f, 4);
    return x;
}
inline long long __double_as_longlong(double d)
{
    long long x;
    std::memcpy(&x, &d, 8);
    return x;
}

// The harness runs one thread at a time, so the atomics are plain updates.
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v)
{
    unsigned long long old = *p;
    *p = old + v;
    return old;
}
inline unsigned long long atomicOr(unsigned long long* p, unsigned long long v)
{
    unsigned long long old = *p;
    *p = old | v;
    return old;
}

// cvt.rna.tf32.f32: a sign-magnitude word rounds its magnitude to a multiple of 2^13,
// halves away from zero, by adding half that step before clearing the low bits;
// infinities and NaNs pass.
inline unsigned wb_cvt_rna_tf32(float x)
{
    unsigned b;
    std::memcpy(&b, &x, 4);
    return (b & 0x7f800000u) == 0x7f800000u ? b : (b + 0x1000u) & 0xffffe000u;
}

// cp.async copies at once: its consumers sit behind a barrier anyway.
inline void cp_async16(float* dst, const float* src) { std::memcpy(dst, src, 16); }
inline void cp_async_commit() {}
inline void cp_async_wait_all() {}

// The fused kernels' phases (cta.cuh), executed thread by thread; a barrier is the end of
// a phase.
#define TS_PHASE(...) do { for (int tid = 0; tid < F_NT; tid++) { __VA_ARGS__; } } while (0)
#define TS_SYNC() do { } while (0)
#define TS_SYNC_ASYNC() do { } while (0)
#define TS_ACC_DECL std::vector<TsAcc> accs_(F_NT)
#define TS_ACC(tid) accs_[tid]

#endif
