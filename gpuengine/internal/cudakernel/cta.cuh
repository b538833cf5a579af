// The CTA loop of the fused kernels (fused.cu, tf32x3.cu). A CTA takes tiles cta, cta + ncta,
// ... of TM consecutive samples; per tile it generates the inputs into xs (tile.cuh), then per
// layer multiplies them by the layer's weight slices (k_slice), stores the layer's outputs
// into xs (k_store) and adds their tile sums to the CTA's slot. The slices stream through two
// shared buffers, one copied (cp.async) while the other is used, or, with TS_RESIDENT, sit in
// shared memory for the whole launch. At the end the slot goes into the launch totals.
//
// The including kernel defines, before including this file: TsAcc (one thread's outputs)
// with k_zero, k_slice and k_store; TS_NS (slices per layer); TS_SLICE16 (16-byte chunks per
// slice, the slices of all layers consecutive in the weights); TS_RESIDENT (0 or 1).
//
// The tile is written as phases separated by barriers. TS_PHASE runs its statements as
// thread `tid`; the host harness (testdata/host) defines it as a loop over all tids and the
// barriers as no-ops, which executes this very code sequentially on a CPU.
#ifndef WB_CTA_CUH
#define WB_CTA_CUH

#ifndef TS_PHASE
#define TS_PHASE(...) do { const int tid = (int)threadIdx.x; __VA_ARGS__; } while (0)
#define TS_SYNC() __syncthreads()
#define TS_SYNC_ASYNC() do { cp_async_wait_all(); __syncthreads(); } while (0)
#define TS_ACC_DECL TsAcc acc_
#define TS_ACC(tid) ((void)(tid), acc_)
#endif

#define TS_ROUNDS ((TS_SLICE16 + F_NT - 1) / F_NT) // copies per thread and slice, at most

// Starts copying one slice from src into buf. The trip count is a constant, so the loop
// unrolls into TS_ROUNDS copies with no loop or bounds code when F_NT divides TS_SLICE16
// (every production shape).
WB_DEVICE void ts_issue(int tid, float* buf, const float* src)
{
#pragma unroll
    for (int r = 0; r < TS_ROUNDS; r++) {
        const int i = tid + r * F_NT;
        if (TS_SLICE16 % F_NT == 0 || i < TS_SLICE16)
            cp_async16(buf + 4 * i, src + 4 * i);
    }
    cp_async_commit();
}

// Starts copying every layer's slices into buf (resident weights).
WB_DEVICE void ts_issue_all(int tid, float* buf, const float* weights)
{
    for (int i = tid; i < D * TS_NS * TS_SLICE16; i += F_NT)
        cp_async16(buf + 4 * i, weights + 4 * i);
    cp_async_commit();
}

// Offsets into ws stay int: with 64-bit offsets NVRTC 11.8 kept the kernel's shared
// pointers as 64-bit generic addresses and mlp_fused spilled 340 bytes (nvcc did not).

// Layer l with every layer's weights in ws: its slices in order, with no barrier between
// them (nothing in ws changes).
WB_DEVICE void ts_layer_resident(TsAcc& f, int tid, const float* xs, const float* ws, int l)
{
    k_zero(f);
    for (int k = 0; k < TS_NS; k++)
        k_slice(f, tid, xs, ws + 4 * (l * TS_NS + k) * TS_SLICE16, k);
}

// One CTA's share of samples [first, first+count).
WB_DEVICE void ts_cta(int cta, int ncta, float* xs, float* ws, const float* weights, u32 k0, u32 k1, u64 first,
                      u64 count, u64* slot, u64* words, u64* err)
{
    TS_ACC_DECL;
    TS_PHASE(ts_slot_zero(tid, slot); if (TS_RESIDENT) ts_issue_all(tid, ws, weights));
    const u64 ntiles = (count + TM - 1) / TM;
    for (u64 t = (u64)cta; t < ntiles; t += (u64)ncta) {
        const u64 left = count - t * TM;
        const int valid = left < (u64)TM ? (int)left : TM;
        TS_SYNC(); // the previous tile's column sums are done with xs
        TS_PHASE(ts_inputs(tid, xs, first + t * TM, valid, k0, k1); if (!TS_RESIDENT) ts_issue(tid, ws, weights));
        TS_SYNC_ASYNC();
        for (int l = 0; l < D; l++) {
            if (TS_RESIDENT) {
                TS_PHASE(ts_layer_resident(TS_ACC(tid), tid, xs, ws, l));
                TS_SYNC(); // every thread is done with xs
            } else {
                // Slice g = l·TS_NS + k. The outputs are zeroed once per layer, outside the
                // slice loop: zeroing them under `if (k == 0)` inside cost 128 FSEL a slice
                // (ptxas selects rather than branches), 5% of mlp_fused's instructions.
                TS_PHASE(k_zero(TS_ACC(tid)));
                for (int k = 0; k < TS_NS; k++) {
                    const int g = l * TS_NS + k;
                    TS_PHASE(
                        if (g + 1 < D * TS_NS)
                            ts_issue(tid, ws + 4 * ((g + 1) & 1) * TS_SLICE16, weights + (u64)4 * (g + 1) * TS_SLICE16);
                        k_slice(TS_ACC(tid), tid, xs, ws + 4 * (g & 1) * TS_SLICE16, k));
                    TS_SYNC_ASYNC(); // slice g+1 has landed and every thread is done with xs
                }
            }
            TS_PHASE(k_store(TS_ACC(tid), tid, xs));
            TS_SYNC();
            TS_PHASE(ts_colsums(tid, xs, l, slot, err));
        }
    }
    TS_SYNC(); // the slot's lanes were written by other threads
    TS_PHASE(ts_flush(tid, slot, words));
}

#endif
