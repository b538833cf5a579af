// The tensor core of mlp_tf32x3 on the host (tf32x3.cu includes this through TC_EMULATE):
// mma.sync.m16n8k8 .tf32 across a warp, from the PTX ISA's fragment layout, with exact
// products and a model of the summation the hardware does not document.
//
// The harness runs a warp's lanes one after another, so a lane cannot read the others'
// registers when its mma runs. Its fragments therefore hold every lane's registers,
// loaded by the kernel's own per-lane functions (tc_a_lane, tc_b_lane) for each lane in
// turn; tc_mma places lane l's register i where the PTX ISA puts it and multiplies the
// whole tiles. A kernel that loads the wrong element for a lane, or stores a result where
// the layout does not put it, gets another product than the CPU's reference.
//
// The model (g_tc_kb, g_tc_guard, g_tc_rn; host_test.go's tcModel is the same in Go):
// the accumulator and the products of a block of kb consecutive k are aligned to the
// largest exponent among them, each cut toward zero to 24 + guard bits below it, summed
// exactly, and the sum rounded to FP32 toward zero (or to nearest); a step of eight k is
// 8/kb such blocks in order.
#ifndef WB_TC_EMULATE_H
#define WB_TC_EMULATE_H
#include <cmath>
#include <cstdint>
#include <cstring>

static int g_tc_kb = 8, g_tc_guard = 3;
static bool g_tc_rn = false;

struct TcA {
    u32 big[4], small[4];
    u32 all_big[32][4], all_small[32][4];
};
struct TcB {
    u32 big[2], small[2];
    u32 all_big[32][2], all_small[32][2];
};

inline void tc_load_a(TcA& a, const float* xs, int row0, int k0, int lane)
{
    for (int l = 0; l < 32; l++)
        tc_a_lane(a.all_big[l], a.all_small[l], xs, row0, k0, l);
    std::memcpy(a.big, a.all_big[lane], sizeof a.big);
    std::memcpy(a.small, a.all_small[lane], sizeof a.small);
}

inline void tc_load_b(TcB& b, const float* slice, int s, int n, int lane)
{
    for (int l = 0; l < 32; l++)
        tc_b_lane(b.all_big[l], b.all_small[l], slice, s, n, l);
    std::memcpy(b.big, b.all_big[lane], sizeof b.big);
    std::memcpy(b.small, b.all_small[lane], sizeof b.small);
}

// S·2^e rounded to FP32 (toward zero, or to nearest with ties to even), S exact.
inline float tc_round(int64_t S, int e, bool rn)
{
    if (S == 0)
        return 0.0f;
    uint64_t u = S < 0 ? 0 - (uint64_t)S : (uint64_t)S;
    int drop = 64 - __builtin_clzll(u) - 24;
    if (drop > 0) {
        const uint64_t rem = u & ((1ull << drop) - 1), half = 1ull << (drop - 1);
        u >>= drop;
        if (rn && (rem > half || (rem == half && (u & 1))))
            u++;
        e += drop;
    }
    const float v = (float)std::ldexp((double)u, e);
    return S < 0 ? -v : v;
}

// One block: c and n exact products aligned, cut and summed (the model above).
inline float tc_block(float c, const double* p, int n)
{
    int emax = INT32_MIN;
    auto top = [&emax](double v) {
        if (v != 0.0) {
            int e;
            std::frexp(v, &e);
            emax = e > emax ? e : emax;
        }
    };
    top(c);
    for (int k = 0; k < n; k++)
        top(p[k]);
    if (emax == INT32_MIN)
        return 0.0f;
    const int q = emax - 24 - g_tc_guard;
    int64_t S = (int64_t)std::trunc(std::ldexp((double)c, -q));
    for (int k = 0; k < n; k++)
        S += (int64_t)std::trunc(std::ldexp(p[k], -q));
    return tc_round(S, q, g_tc_rn);
}

inline float tc_bits(u32 w)
{
    float f;
    std::memcpy(&f, &w, 4);
    return f;
}

// d = a·b + d for lane's four elements of the warp's m16n8k8 tile.
template <bool ASmall, bool BSmall>
inline void tc_mma(float (&d)[4], const TcA& a, const TcB& b, int lane)
{
    double A[16][8], B[8][8];
    for (int l = 0; l < 32; l++) {
        const int g = l >> 2, t = l & 3;
        const u32* x = ASmall ? a.all_small[l] : a.all_big[l];
        const u32* y = BSmall ? b.all_small[l] : b.all_big[l];
        A[g][t] = tc_bits(x[0]);
        A[g + 8][t] = tc_bits(x[1]);
        A[g][t + 4] = tc_bits(x[2]);
        A[g + 8][t + 4] = tc_bits(x[3]);
        B[t][g] = tc_bits(y[0]);
        B[t + 4][g] = tc_bits(y[1]);
    }
    const int g = lane >> 2, t = lane & 3;
    const int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {2 * t, 2 * t + 1, 2 * t, 2 * t + 1};
    for (int e = 0; e < 4; e++) {
        double p[8];
        for (int k = 0; k < 8; k++)
            p[k] = A[rows[e]][k] * B[k][cols[e]]; // TF32 × TF32: 22 bits, exact
        float acc = d[e];
        for (int k0 = 0; k0 < 8; k0 += g_tc_kb)
            acc = tc_block(acc, p + k0, g_tc_kb);
        d[e] = acc;
    }
}

#endif
