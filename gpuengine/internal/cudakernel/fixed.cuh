// Exact combination of tile sums (docs/ALGORITHM.md "Sums"): each 32-row tile's float64
// column sum T enters as the integer floor(T·2^64). Integers add associatively, so the
// grouping of tiles into threads, CTAs, launches and checkpoints cannot change a bit.
//
// Three representations, all equal modulo 2^192 to the Go package exact's Acc:
//   Fix192       two's complement, three 64-bit limbs with carries (per thread, per CTA slot);
//   carry-save   six 32-bit digits, each added into its own 64-bit word with integer
//                atomics, no carries between words (the global per-launch totals; the host
//                folds them: total = Σ_d word_d·2^(32d), see limbs.go);
//   the host's   exact.Acc built from the carry-save words.
#ifndef WB_FIXED_CUH
#define WB_FIXED_CUH
#include "types.cuh"

#define WB_TILE 32    // samples per tile: part of the algorithm version
#define WB_DIGITS 6   // 32-bit digits of a 192-bit value

struct Fix192 {
    u64 w0, w1, w2;
};

WB_DEVICE Fix192 fix_zero()
{
    Fix192 z = {0ull, 0ull, 0ull};
    return z;
}

WB_DEVICE void fix_add(Fix192& a, const Fix192& b)
{
    u64 s0 = a.w0 + b.w0;
    u64 c0 = s0 < b.w0;
    u64 t1 = a.w1 + b.w1;
    u64 c1 = t1 < b.w1;
    u64 s1 = t1 + c0;
    c1 += s1 < c0;
    a.w2 = a.w2 + b.w2 + c1;
    a.w1 = s1;
    a.w0 = s0;
}

// floor(v·2^64). NaN, ±Inf and |v| ≥ 2^103 set bad (the network diverged) and give 0.
WB_DEVICE Fix192 fix_from_double(double v, bool& bad)
{
    u64 bits = (u64)__double_as_longlong(v);
    int exp = (int)((bits >> 52) & 0x7ff);
    u64 mant = bits & 0xfffffffffffffull;
    Fix192 m = fix_zero();
    if (exp >= 1023 + 103) {
        bad = true;
        return m;
    }
    if (exp == 0)
        exp = 1; // subnormal: no implicit bit
    else
        mant |= 1ull << 52;
    int shift = exp - 1075 + 64; // |v|·2^64 = mant·2^shift, shift ≤ 114
    bool inexact = false;
    if (mant == 0) {
    } else if (shift >= 64) {
        int off = shift - 64;
        m.w1 = mant << off;
        m.w2 = off ? mant >> (64 - off) : 0ull;
    } else if (shift >= 0) {
        m.w0 = mant << shift;
        m.w1 = shift ? mant >> (64 - shift) : 0ull;
    } else if (shift > -64) {
        m.w0 = mant >> (-shift);
        inexact = (mant << (64 + shift)) != 0ull;
    } else {
        inexact = true;
    }
    if (bits >> 63) {
        // floor(−x) = −(m+1) if x has bits below 2^-64, else −m; in two's complement
        // −(m+1) = ~m and −m = ~m + 1.
        m.w0 = ~m.w0;
        m.w1 = ~m.w1;
        m.w2 = ~m.w2;
        if (!inexact) {
            Fix192 one = {1ull, 0ull, 0ull};
            fix_add(m, one);
        }
    }
    return m;
}

// Adds s's six 32-bit digits to the carry-save words of value v (word d of v at d·nv + v).
WB_DEVICE void fix_flush(u64* words, int nv, int v, const Fix192& s)
{
    u64 limb[3] = {s.w0, s.w1, s.w2};
#pragma unroll
    for (int d = 0; d < WB_DIGITS; d++) {
        u64 digit = (limb[d >> 1] >> (32 * (d & 1))) & 0xffffffffull;
        if (digit)
            atomicAdd(&words[(u64)d * nv + v], digit);
    }
}

// Sequential float64 sums of one column over `rows` consecutive rows (stride apart), in
// ascending row order from +0; with squares, sq gets the sums of the exact squares.
// One tile's T (and Q).
WB_DEVICE void tile_column_sums(const float* x, int stride, int rows, bool squares, double& t, double& sq)
{
    t = 0.0;
    sq = 0.0;
    for (int r = 0; r < rows; r++) {
        double v = (double)x[r * stride];
        t = __dadd_rn(t, v);
        if (squares)
            sq = __dadd_rn(sq, __dmul_rn(v, v));
    }
}

#endif
