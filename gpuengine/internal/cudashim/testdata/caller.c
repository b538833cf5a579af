/* The five calls exactly as gorgonia.org/cu v0.9.6 makes them (CUDA ≤ 12 signatures). */
#include <cuda.h>

int main(void)
{
    CUcontext ctx;
    CUgraphNode a = 0, b = 0;
    size_t n = 1;
    cuCtxCreate(&ctx, 4, 0);
    cuMemAdvise(16, 32, CU_MEM_ADVISE_SET_READ_MOSTLY, 3);
    cuMemAdvise(16, 32, CU_MEM_ADVISE_SET_READ_MOSTLY, CU_DEVICE_CPU);
    cuMemPrefetchAsync(16, 32, 2, 0);
    cuMemPrefetchAsync(16, 32, CU_DEVICE_CPU, 0);
    cuGraphAddDependencies(0, &a, &b, 1);
    cuGraphGetEdges(0, &a, &b, &n);
    return 0;
}
