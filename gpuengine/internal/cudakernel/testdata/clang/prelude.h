// Stand-in for the built-ins NVRTC provides, mapped to clang's NVVM builtins, so that
// clang_test.go can compile the sources as real CUDA device code without a CUDA toolkit.
#define __CUDACC__ 1
#include "__clang_cuda_builtin_vars.h"
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
struct __attribute__((aligned(16))) float4 { float x, y, z, w; };
__device__ inline float __fmul_rn(float a, float b) { return __nvvm_mul_rn_f(a, b); }
__device__ inline float __fadd_rn(float a, float b) { return __nvvm_add_rn_f(a, b); }
__device__ inline float __fsub_rn(float a, float b) { return __nvvm_add_rn_f(a, -b); }
__device__ inline float __fdiv_rn(float a, float b) { return __nvvm_div_rn_f(a, b); }
__device__ inline float __fsqrt_rn(float a) { return __nvvm_sqrt_rn_f(a); }
__device__ inline float __fmaf_rn(float a, float b, float c) { return __nvvm_fma_rn_f(a, b, c); }
__device__ inline double __dadd_rn(double a, double b) { return __nvvm_add_rn_d(a, b); }
__device__ inline double __dmul_rn(double a, double b) { return __nvvm_mul_rn_d(a, b); }
__device__ inline unsigned __umulhi(unsigned a, unsigned b) { return __nvvm_mulhi_ui(a, b); }
__device__ inline int __clzll(long long x) { return __builtin_clzll((unsigned long long)x); }
__device__ inline float __ll2float_rn(long long x) { return __nvvm_ll2f_rn(x); }
__device__ inline float __ull2float_rn(unsigned long long x) { return __nvvm_ull2f_rn(x); }
__device__ inline float __uint2float_rn(unsigned x) { return __nvvm_ui2f_rn(x); }
__device__ inline float __int2float_rn(int x) { return __nvvm_i2f_rn(x); }
__device__ inline float __int_as_float(int x) { return __nvvm_bitcast_i2f(x); }
__device__ inline int __float_as_int(float x) { return __nvvm_bitcast_f2i(x); }
__device__ inline float fabsf(float x) { return __nvvm_fabs_f(x); }
__device__ inline long long __double_as_longlong(double x) { return __nvvm_bitcast_d2ll(x); }
__device__ inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) { return __nvvm_atom_add_gen_ll((long long*)p, (long long)v); }
__device__ inline unsigned long long atomicOr(unsigned long long* p, unsigned long long v) { return __nvvm_atom_or_gen_ll((long long*)p, (long long)v); }
