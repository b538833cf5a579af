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
WB_DEVICE u32x4 philox4x32_10(u32x4 c, u32 k0, u32 k1)
{
    for (int r = 0; r < 10; r++) {
        if (r > 0) {
            k0 += 0x9E3779B9u;
            k1 += 0xBB67AE85u;
        }
        u32 hiA = __umulhi(0xD2511F53u, c.x), loA = 0xD2511F53u * c.x;
        u32 hiB = __umulhi(0xCD9E8D57u, c.z), loB = 0xCD9E8D57u * c.z;
        u32x4 n = {hiB ^ c.y ^ k0, loB, hiA ^ c.w ^ k1, loA};
        c = n;
    }
    return c;
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
    float s = __fdiv_rn(__ll2float_rn((long long)m - (long long)p2), __ull2float_rn(m + p2));
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
    return __fsqrt_rn(__fmul_rn(-2.0f, lnu));
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
    float t;
    switch (rb >> 30) {
    case 1: t = c; c = -s; s = t; break;
    case 2: c = -c; s = -s; break;
    case 3: t = c; c = s; s = -t; break;
    default: break;
    }
    z0 = __fmul_rn(rad, c);
    z1 = __fmul_rn(rad, s);
}

// Inputs 4b..4b+3 of sample n (columns past W, and every column of a dead row, are 0).
WB_DEVICE float4 philox_inputs4(u64 n, u32 b, u32 k0, u32 k1, int width, bool live)
{
    float4 z = {0.0f, 0.0f, 0.0f, 0.0f};
    if (!live || (int)(4 * b) >= width)
        return z;
    u32x4 c = {(u32)n, (u32)(n >> 32), b, 0u};
    u32x4 o = philox4x32_10(c, k0, k1);
    bm_pair(o.x, o.y, z.x, z.y);
    bm_pair(o.z, o.w, z.z, z.w);
    int j = 4 * (int)b;
    if (j + 1 >= width) z.y = 0.0f;
    if (j + 2 >= width) z.z = 0.0f;
    if (j + 3 >= width) z.w = 0.0f;
    return z;
}

#endif
