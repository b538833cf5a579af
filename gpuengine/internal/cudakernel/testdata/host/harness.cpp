// Runs the CUDA sources' device code on the host for the Go tests (host_test.go).
// The network shape is runtime data here (the kernel macros name the variables below),
// so one build covers every shape; fragments are sized for the largest RT×CT.
//
//   harness block|pair|normal|fixed|sum      reads operands from stdin, one case a line
//   harness radius LO HI STEP                bm_radius(r) against IEEE division and square root,
//                                            for r in [LO, HI) by STEP and the words on stdin
//   harness fused W WP D TM RT CT KS LANES RESIDENT N k0 k1 weights chunk grid
//   harness pipeline W D N k0 k1 weights chunk rows
//
// The bake modes print, for every chunk of samples, the launch's carry-save words (6·NV
// of them, hex, digit-major) and its divergence flag.
#include "hostshim.h"

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <string>

static int g_w, g_wp, g_d, g_tm, g_rt, g_ct, g_ks, g_lanes, g_resident;
#define WB_W g_w
#define WB_WP g_wp
#define WB_D g_d
#define WB_TM g_tm
#define WB_RT g_rt
#define WB_CT g_ct
#define WB_KS g_ks
#define WB_LANES g_lanes
#define WB_RESIDENT g_resident
#define FRAG_RT 8
#define FRAG_CT 16
#define TS_PER_MAX 4 // TM ≤ 128

#include "fused.cu"
#include "pipeline.cu"

#include "io.h"

// The radius of docs/ALGORITHM.md with the host's IEEE division and square root, the
// operations bm_radius's branch-free sequences must reproduce; with the operands of the
// division (a/b, p = 2^e) and of the square root (x).
struct IEEERadius {
    float a, b, x, radius;
    int e;
};

static IEEERadius ieee_radius(u32 r)
{
    IEEERadius o;
    u64 m = ((u64)r << 1) | 1ull;
    o.e = 63 - __builtin_clzll(m);
    u64 top = o.e >= 23 ? m >> (o.e - 23) : m << (23 - o.e);
    if (top > 0xb504f3ull)
        o.e++;
    const u64 p = 1ull << o.e;
    o.a = (float)((long long)m - (long long)p);
    o.b = (float)(m + p);
    const float s = o.a / o.b, s2 = s * s;
    float q = __int_as_float(0x3e3a2e8c);
    for (int c : {0x3e638e39, 0x3e924925, 0x3ecccccd, 0x3f2aaaab, 0x40000000})
        q = q * s2 + __int_as_float(c);
    const float k = (float)(o.e - 33);
    o.x = -2.0f * (k * __int_as_float(0x3f317200) + (k * __int_as_float(0x35bfbe8e) + q * s));
    o.radius = std::sqrt(o.x);
    return o;
}

// Words lo, lo+step, ... below hi, then the words on stdin, where wb_div_radius,
// wb_sqrt_radius or bm_radius differs from the IEEE operation: their count, and the
// first few.
static int radius(char** a)
{
    const u64 lo = std::strtoull(a[0], nullptr, 0), hi = std::strtoull(a[1], nullptr, 0);
    const u64 step = std::strtoull(a[2], nullptr, 0);
    u64 bad = 0;
    auto check = [&bad](u32 r) {
        const IEEERadius want = ieee_radius(r);
        const float div = wb_div_radius(want.a, want.b, want.e), root = wb_sqrt_radius(want.x);
        const float got = bm_radius(r);
        if ((f32bits(div) != f32bits(want.a / want.b) || f32bits(root) != f32bits(want.radius) ||
             f32bits(got) != f32bits(want.radius)) &&
            bad++ < 10)
            std::printf("word %08x: s %08x radius %08x %08x, IEEE %08x %08x\n", r, f32bits(div), f32bits(root),
                        f32bits(got), f32bits(want.a / want.b), f32bits(want.radius));
    };
    for (u64 r = lo; r < hi; r += step)
        check((u32)r);
    unsigned r;
    while (std::scanf("%x", &r) == 1)
        check(r);
    std::printf("bad %llu\n", bad);
    return 0;
}

static int unary(const std::string& mode)
{
    char line[256];
    std::vector<u64> sum_words;
    std::vector<Fix192> groups;
    while (std::fgets(line, sizeof line, stdin)) {
        if (mode == "block") {
            unsigned c0, c1, c2, c3, k0, k1;
            std::sscanf(line, "%x %x %x %x %x %x", &c0, &c1, &c2, &c3, &k0, &k1);
            u32x4 o = philox4x32_10(u32x4{c0, c1, c2, c3}, k0, k1);
            std::printf("%08x %08x %08x %08x\n", o.x, o.y, o.z, o.w);
        } else if (mode == "pair") {
            unsigned ra, rb;
            std::sscanf(line, "%x %x", &ra, &rb);
            float z0, z1;
            bm_pair(ra, rb, z0, z1);
            std::printf("%08x %08x\n", f32bits(z0), f32bits(z1));
        } else if (mode == "normal") {
            unsigned k0, k1;
            unsigned long long n;
            int j;
            std::sscanf(line, "%x %x %llx %d", &k0, &k1, &n, &j);
            float4 z = philox_inputs4(n, (u32)(j / 4), k0, k1, j + 1, true);
            std::printf("%08x\n", f32bits(wb_f4get(z, j % 4)));
        } else if (mode == "fixed") {
            unsigned long long bits;
            std::sscanf(line, "%llx", &bits);
            double v;
            std::memcpy(&v, &bits, 8);
            bool bad = false;
            Fix192 m = fix_from_double(v, bad);
            std::printf("%d %016llx %016llx %016llx\n", bad ? 1 : 0, m.w2, m.w1, m.w0);
        } else if (mode == "sum") { // "group bits": per-group Fix192 sums, then one flush each
            unsigned g;
            unsigned long long bits;
            std::sscanf(line, "%u %llx", &g, &bits);
            double v;
            std::memcpy(&v, &bits, 8);
            if (g >= groups.size())
                groups.resize(g + 1, fix_zero());
            bool bad = false;
            fix_add(groups[g], fix_from_double(v, bad));
        } else {
            std::fprintf(stderr, "unknown mode %s\n", mode.c_str());
            return 2;
        }
    }
    if (mode == "sum") {
        std::vector<u64> words(WB_DIGITS, 0);
        for (const Fix192& s : groups)
            fix_flush(words.data(), 1, 0, s);
        print_words(words, 0);
    }
    return 0;
}

static int fused(char** a)
{
    g_w = std::atoi(a[0]), g_wp = std::atoi(a[1]), g_d = std::atoi(a[2]), g_tm = std::atoi(a[3]);
    g_rt = std::atoi(a[4]), g_ct = std::atoi(a[5]), g_ks = std::atoi(a[6]);
    g_lanes = std::atoi(a[7]), g_resident = std::atoi(a[8]);
    const u64 n = std::strtoull(a[9], nullptr, 10);
    const u32 k0 = (u32)std::strtoul(a[10], nullptr, 16), k1 = (u32)std::strtoul(a[11], nullptr, 16);
    std::vector<float> weights = read_values<float>(a[12], (size_t)D * WP * WP);
    const u64 chunk = std::strtoull(a[13], nullptr, 10);
    const int grid = std::atoi(a[14]);
    if (RT > FRAG_RT || CT > FRAG_CT || TS_TILES / TS_LANES > TS_PER_MAX) {
        std::fprintf(stderr, "RT×CT %d×%d or TM %d exceeds the harness's %d×%d, %d\n", RT, CT, TM, FRAG_RT, FRAG_CT,
                     TS_PER_MAX * WB_TILE);
        return 2;
    }
    float* xs = alloc_floats((size_t)TM * WP);
    float* ws = alloc_floats(WB_RESIDENT ? (size_t)D * WP * WP : (size_t)2 * KS * WP);
    std::vector<u64> slots((size_t)grid * 3 * TS_LANES * F_NV);
    for (u64 first = 0; first < n; first += chunk) {
        const u64 count = n - first < chunk ? n - first : chunk;
        std::vector<u64> words((size_t)WB_DIGITS * F_NV, 0);
        u64 err = 0;
        for (int cta = 0; cta < grid; cta++)
            ts_cta(cta, grid, xs, ws, weights.data(), k0, k1, first, count, &slots[(size_t)cta * 3 * TS_LANES * F_NV],
                      words.data(), &err);
        print_words(words, err);
    }
    std::free(xs);
    std::free(ws);
    return 0;
}

static int pipeline(char** a)
{
    g_w = std::atoi(a[0]), g_d = std::atoi(a[1]);
    const u64 n = std::strtoull(a[2], nullptr, 10);
    const u32 k0 = (u32)std::strtoul(a[3], nullptr, 16), k1 = (u32)std::strtoul(a[4], nullptr, 16);
    std::vector<float> weights = read_values<float>(a[5], (size_t)D * W * W);
    const u64 chunk = std::strtoull(a[6], nullptr, 10);
    const u64 rows = std::strtoull(a[7], nullptr, 10);
    float* x = alloc_floats(rows * W);
    float* y = alloc_floats(rows * W);
    const u64 groups = (rows + WB_TILE * P_TILES_PER_CTA - 1) / (WB_TILE * P_TILES_PER_CTA);
    for (u64 first = 0; first < n; first += chunk) {
        const u64 end = n - first < chunk ? n : first + chunk;
        std::vector<u64> words((size_t)WB_DIGITS * P_NV, 0);
        u64 err = 0;
        for (u64 c0 = first; c0 < end; c0 += rows) {
            const u64 valid = end - c0 < rows ? end - c0 : rows;
            for (u64 i = 0; i < rows * ((W + 3) / 4); i++)
                gen_inputs_item(x, i, c0, valid, k0, k1);
            for (int l = 0; l < D; l++) {
                for (u64 i = 0; i < rows * W; i++)
                    layer_reference_item(y, x, weights.data() + (size_t)l * W * W, i);
                for (u64 g = 0; g < groups; g++)
                    for (int c = 0; c < W; c++)
                        relu_tilesum_column(y, c, g, rows, valid, l, words.data(), &err);
                std::swap(x, y);
            }
        }
        print_words(words, err);
    }
    std::free(x);
    std::free(y);
    return 0;
}

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: harness MODE [ARGS]\n");
        return 2;
    }
    std::string mode = argv[1];
    if (mode == "fused" && argc == 17)
        return fused(argv + 2);
    if (mode == "pipeline" && argc == 10)
        return pipeline(argv + 2);
    if (mode == "radius" && argc == 5)
        return radius(argv + 2);
    return unary(mode);
}
