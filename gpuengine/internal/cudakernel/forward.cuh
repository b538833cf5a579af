// The forward contract of package gpuengine/kernel, one output at a time: acc starts at
// +0 and takes one fused multiply-add per input in ascending k. The fused kernel computes
// the same chain with its tiles; this plain form is the pipeline's reference layer and
// the host harness's yardstick.
#ifndef WB_FORWARD_CUH
#define WB_FORWARD_CUH
#include "types.cuh"

// Σ_k x[k]·w[k·stride] as a sequential fma chain (before relu).
WB_DEVICE float dot_fma(const float* x, const float* w, int n, int stride)
{
    float acc = 0.0f;
    for (int k = 0; k < n; k++)
        acc = __fmaf_rn(x[k], w[(long long)k * stride], acc);
    return acc;
}

#endif
