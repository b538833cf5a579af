// Inputs of the `philox` algorithm (docs/ALGORITHM.md "Inputs"): Philox4x32-10 and the
// fixed-operation Box–Muller transform. Every floating-point step is one explicitly
// rounded binary32 operation so the result is the Go twin's (package philox) bit for bit;
// library log/sin/cos are avoided because their last bits differ between platforms.
#ifndef WB_PHILOX_CUH
#define WB_PHILOX_CUH
#include "types.cuh"

struct u32x4 {
    u32 x, y, z, w;
};

// Philox4x32 with 10 rounds (Salmon et al., SC'11); round and Weyl constants as in Random123.
// The N blocks' rounds are interleaved: each block is a chain of dependent multiplies, and
// N independent chains keep the integer pipes busy where one would wait on its own latency.
template <int N>
WB_DEVICE void philox4x32_10_n(u32x4 (&c)[N], u32 k0, u32 k1)
{
#pragma unroll
    for (int r = 0; r < 10; r++) {
#pragma unroll
        for (int i = 0; i < N; i++) {
            u32 hiA = __umulhi(0xD2511F53u, c[i].x), loA = 0xD2511F53u * c[i].x;
            u32 hiB = __umulhi(0xCD9E8D57u, c[i].z), loB = 0xCD9E8D57u * c[i].z;
            u32x4 n = {hiB ^ c[i].y ^ k0, loB, hiA ^ c[i].w ^ k1, loA};
            c[i] = n;
        }
        k0 += 0x9E3779B9u;
        k1 += 0xBB67AE85u;
    }
}

WB_DEVICE u32x4 philox4x32_10(u32x4 c, u32 k0, u32 k1)
{
    u32x4 one[1] = {c};
    philox4x32_10_n<1>(one, k0, k1);
    return one[0];
}

// RN(a/b) for the radius's s = (m − p)/(m + p), a = float(m − p), b = float(m + p), p = 2^e,
// without a branch: CUDA's __fdiv_rn takes a slow path out of line for operands it cannot
// prove in range, and the branch splits the RNG into blocks the scheduler cannot overlap.
// Scaled by 2^-e (exact), b lies in [1.70, 2.42]: a quadratic gives 1/b within 1.4e-3,
// two Newton steps within an ulp, the residual step a quotient within an ulp, and of it
// and its neighbour toward the true quotient the one with the smaller exact residual is
// the rounded quotient. Every operation is one IEEE binary32 operation, so the host
// reproduces it bit for bit: TestHostRadiusExhaustive compares it with the IEEE division
// for all 2^32 radius words, the only inputs it ever sees.
WB_DEVICE float wb_div_radius(float a, float b, int e)
{
    const float scale = __int_as_float((127 - e) << 23);
    const float A = __fmul_rn(a, scale), B = __fmul_rn(b, scale);
    float y = __fmaf_rn(__fmaf_rn(__int_as_float(0x3defc4a8), B, __int_as_float((int)0xbf39388eu)), B,
                        __int_as_float(0x3fbd522a));
    y = __fmaf_rn(y, __fmaf_rn(-B, y, 1.0f), y);
    y = __fmaf_rn(y, __fmaf_rn(-B, y, 1.0f), y);
    float q = __fmul_rn(A, y);
    q = __fmaf_rn(__fmaf_rn(-B, q, A), y, q);
    // The one case the step above misrounds is b = 2^24 − 1 (a tie of q + r·y), found by
    // that test; the comparison below settles every case by the residuals themselves.
    const float r = __fmaf_rn(-B, q, A);
    const int qb = __float_as_int(q);
    const int toward = r == 0.0f ? 0 : ((__float_as_int(r) ^ qb) < 0 ? -1 : 1);
    const float qn = __int_as_float(qb + toward);
    return fabsf(__fmaf_rn(-B, qn, A)) < fabsf(r) ? qn : q;
}

// RN(√x) for the radius's x = −2·ln u ∈ [2^-33, 46] (normal, positive), without a branch
// (as wb_div_radius, and proven the same way): x = X·4^k with X ∈ [1, 4), a cubic gives
// 1/√X within 7e-3, two Newton steps within an ulp, and Markstein's step the rounded root.
WB_DEVICE float wb_sqrt_radius(float x)
{
    const int k = ((__float_as_int(x) >> 23) - 127) >> 1;
    const float X = __fmul_rn(x, __int_as_float((127 - 2 * k) << 23));
    float y = __fmaf_rn(__fmaf_rn(__fmaf_rn(__int_as_float((int)0xbc9c0fa3u), X, __int_as_float(0x3e475bb8)), X,
                                  __int_as_float((int)0xbf3d2627u)),
                        X, __int_as_float(0x3fc73126));
    y = __fmaf_rn(__fmul_rn(0.5f, y), __fmaf_rn(-__fmul_rn(X, y), y, 1.0f), y);
    y = __fmaf_rn(__fmul_rn(0.5f, y), __fmaf_rn(-__fmul_rn(X, y), y, 1.0f), y);
    float s = __fmul_rn(X, y);
    s = __fmaf_rn(__fmaf_rn(-s, s, X), __fmul_rn(0.5f, y), s);
    return __fmul_rn(s, __int_as_float((127 + k) << 23));
}

// sqrt(-2 ln u) for u = (2r+1)·2^-33: ln u = k·ln2 + ln f with f folded into [1/√2, √2],
// ln f = 2·atanh(s), s = (m − 2^e)/(m + 2^e) from exact integers.
WB_DEVICE float bm_radius(u32 r)
{
    u64 m = ((u64)r << 1) | 1ull;
    int e = 63 - __clzll((long long)m);
    u64 top = e >= 23 ? m >> (e - 23) : m << (23 - e);
    if (top > 0xb504f3ull)
        e++;
    u64 p2 = 1ull << e;
    float s = wb_div_radius(__ll2float_rn((long long)m - (long long)p2), __ull2float_rn(m + p2), e);
    float s2 = __fmul_rn(s, s);
    float p = __int_as_float(0x3e3a2e8c);                    // 2/11
    p = __fadd_rn(__fmul_rn(p, s2), __int_as_float(0x3e638e39)); // 2/9
    p = __fadd_rn(__fmul_rn(p, s2), __int_as_float(0x3e924925)); // 2/7
    p = __fadd_rn(__fmul_rn(p, s2), __int_as_float(0x3ecccccd)); // 2/5
    p = __fadd_rn(__fmul_rn(p, s2), __int_as_float(0x3f2aaaab)); // 2/3
    p = __fadd_rn(__fmul_rn(p, s2), __int_as_float(0x40000000)); // 2
    float lnf = __fmul_rn(p, s);
    float k = __int2float_rn(e - 33);
    float lnu = __fadd_rn(__fmul_rn(k, __int_as_float(0x3f317200)),
                          __fadd_rn(__fmul_rn(k, __int_as_float(0x35bfbe8e)), lnf));
    return wb_sqrt_radius(__fmul_rn(-2.0f, lnu));
}

// sin(π/2·v) for v in [0, 1]: Taylor polynomial in v², Horner from the highest term.
WB_DEVICE float bm_sin_half_pi(float v)
{
    float v2 = __fmul_rn(v, v);
    float p = __int_as_float(0x33747a1a);
    p = __fadd_rn(__fmul_rn(p, v2), __int_as_float((int)0xb67183a8u));
    p = __fadd_rn(__fmul_rn(p, v2), __int_as_float(0x39283c1a));
    p = __fadd_rn(__fmul_rn(p, v2), __int_as_float((int)0xbb996966u));
    p = __fadd_rn(__fmul_rn(p, v2), __int_as_float(0x3da335e3));
    p = __fadd_rn(__fmul_rn(p, v2), __int_as_float((int)0xbf255de7u));
    p = __fadd_rn(__fmul_rn(p, v2), __int_as_float(0x3fc90fdb));
    return __fmul_rn(p, v);
}

// Two normals from two Philox words: ra sets the radius, rb the angle
// (2 bits of quadrant, 23 bits within it).
WB_DEVICE void bm_pair(u32 ra, u32 rb, float& z0, float& z1)
{
    float rad = bm_radius(ra);
    u32 a = (rb >> 7) & 0x7fffffu;
    float v = __fmul_rn(__uint2float_rn(2u * a + 1u), __int_as_float(0x33800000)); // ·2^-24, exact
    float s = bm_sin_half_pi(v);
    float c = bm_sin_half_pi(__fsub_rn(1.0f, v));
    // Rotate by the quadrant q = rb >> 30 with exact sign flips and a swap, as selects
    // rather than a switch: 0 → (c, s), 1 → (−s, c), 2 → (−c, −s), 3 → (s, −c).
    const u32 q = rb >> 30;
    const float x = (q & 1u) ? s : c, y = (q & 1u) ? c : s;
    c = __int_as_float(__float_as_int(x) ^ (int)(((q + 1u) & 2u) << 30));
    s = __int_as_float(__float_as_int(y) ^ (int)((q & 2u) << 30));
    z0 = __fmul_rn(rad, c);
    z1 = __fmul_rn(rad, s);
}

// The four inputs of Philox block o (columns j..j+3): columns past W, and every column of a
// dead row, are 0 (selected, not branched around, so that blocks interleave).
WB_DEVICE float4 philox_normals4(u32x4 o, int j, int width, bool live)
{
    float4 z;
    bm_pair(o.x, o.y, z.x, z.y);
    bm_pair(o.z, o.w, z.z, z.w);
    z.x = live && j < width ? z.x : 0.0f;
    z.y = live && j + 1 < width ? z.y : 0.0f;
    z.z = live && j + 2 < width ? z.z : 0.0f;
    z.w = live && j + 3 < width ? z.w : 0.0f;
    return z;
}

// Inputs 4b..4b+3 of sample n (columns past W, and every column of a dead row, are 0).
WB_DEVICE float4 philox_inputs4(u64 n, u32 b, u32 k0, u32 k1, int width, bool live)
{
    u32x4 c = {(u32)n, (u32)(n >> 32), b, 0u};
    return philox_normals4(philox4x32_10(c, k0, k1), 4 * (int)b, width, live);
}

#endif
