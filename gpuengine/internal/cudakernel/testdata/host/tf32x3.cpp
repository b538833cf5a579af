// Runs mlp_tf32x3's device code on the host for the Go tests (tf32x3_test.go), with the
// tensor core emulated (tc_emulate.h). The shape and the summation model are runtime data.
//
//   tf32x3 W WP D TM WM WN KS LANES N k0 k1 weights chunk grid KB GUARD RN
//
// weights are cudakernel.PackTF32Weights' words; KB, GUARD and RN set the model. For
// every chunk of samples it prints the launch's carry-save words (6·NV of them, hex,
// digit-major) and its divergence flag, as harness.cpp's fused mode does.
#include "hostshim.h"

#include <cstdio>
#include <cstdlib>

static int g_w, g_wp, g_d, g_tm, g_wm, g_wn, g_ks, g_lanes;
#define WB_W g_w
#define WB_WP g_wp
#define WB_D g_d
#define WB_TM g_tm
#define WB_WM g_wm
#define WB_WN g_wn
#define WB_KS g_ks
#define WB_LANES g_lanes
#define TC_MI_MAX 8  // TM ≤ 128, WM ≥ 1
#define TC_NI_MAX 32 // 128 accumulators
#define TS_PER_MAX 4 // TM ≤ 128
#define TC_EMULATE "testdata/host/tc_emulate.h"

#include "tf32x3.cu"

#include "io.h"

int main(int argc, char** argv)
{
    if (argc != 18) {
        std::fprintf(stderr, "usage: tf32x3 W WP D TM WM WN KS LANES N k0 k1 weights chunk grid KB GUARD RN\n");
        return 2;
    }
    char** a = argv + 1;
    g_w = std::atoi(a[0]), g_wp = std::atoi(a[1]), g_d = std::atoi(a[2]), g_tm = std::atoi(a[3]);
    g_wm = std::atoi(a[4]), g_wn = std::atoi(a[5]), g_ks = std::atoi(a[6]), g_lanes = std::atoi(a[7]);
    const u64 n = std::strtoull(a[8], nullptr, 10);
    const u32 k0 = (u32)std::strtoul(a[9], nullptr, 16), k1 = (u32)std::strtoul(a[10], nullptr, 16);
    std::vector<u32> weights = read_values<u32>(a[11], (size_t)D * WP * WP * 2);
    const u64 chunk = std::strtoull(a[12], nullptr, 10);
    const int grid = std::atoi(a[13]);
    g_tc_kb = std::atoi(a[14]), g_tc_guard = std::atoi(a[15]), g_tc_rn = std::atoi(a[16]) != 0;
    if (T_MI > TC_MI_MAX || T_NI > TC_NI_MAX || TS_TILES / TS_LANES > TS_PER_MAX || 8 % g_tc_kb != 0) {
        std::fprintf(stderr, "shape or model beyond the harness's sizes\n");
        return 2;
    }
    float* xs = alloc_floats((size_t)TM * XS);
    float* ws = alloc_floats((size_t)8 * TS_SLICE16);
    std::vector<u64> slots((size_t)grid * 3 * TS_LANES * F_NV);
    for (u64 first = 0; first < n; first += chunk) {
        const u64 count = n - first < chunk ? n - first : chunk;
        std::vector<u64> words((size_t)WB_DIGITS * F_NV, 0);
        u64 err = 0;
        for (int cta = 0; cta < grid; cta++)
            ts_cta(cta, grid, xs, ws, (const float*)weights.data(), k0, k1, first, count,
                   &slots[(size_t)cta * 3 * TS_LANES * F_NV], words.data(), &err);
        print_words(words, err);
    }
    std::free(xs);
    std::free(ws);
    return 0;
}
