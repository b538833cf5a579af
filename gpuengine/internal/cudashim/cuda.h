/*
 * cuda.h shim: lets gorgonia.org/cu v0.9.6 (written against CUDA ≤ 12 signatures)
 * compile against CUDA 13 headers without touching the module.
 *
 * CUDA 13.0 changed the default signature of five driver calls the module makes:
 * cuCtxCreate (now _v4, with a CUctxCreateParams*), cuMemAdvise and cuMemPrefetchAsync
 * (a CUmemLocation instead of a CUdevice; prefetch also takes flags), and
 * cuGraphAddDependencies / cuGraphGetEdges (an extra CUgraphEdgeData*). Below 13.0 this
 * file only forwards to the real header.
 *
 * Use: put this directory first on the C include path of every cgo compile, e.g.
 *   export CGO_CFLAGS="-O2 -g -I$PWD/gpuengine/internal/cudashim -I/usr/local/cuda/include"
 * (CGO_CFLAGS replaces Go's default "-O2 -g", hence repeated). A #cgo directive in our
 * own package would not reach gorgonia's packages; the environment variable does.
 * #include_next then finds the toolkit's cuda.h further down the path.
 */
#ifndef WHESTBAKE_CUDASHIM_CUDA_H
#define WHESTBAKE_CUDASHIM_CUDA_H

#include_next <cuda.h>

#if defined(CUDA_VERSION) && CUDA_VERSION >= 13000
#include <stddef.h>

/* The old call's context flags and device, with default creation parameters. */
static inline CUresult whestbake_cuCtxCreate(CUcontext *ctx, unsigned int flags, CUdevice dev)
{
    return cuCtxCreate_v4(ctx, NULL, flags, dev);
}

/* Old calls name a device, or CU_DEVICE_CPU (-1) for host memory. */
static inline CUmemLocation whestbake_location(CUdevice dev)
{
    CUmemLocation loc;
    if (dev == CU_DEVICE_CPU) {
        loc.type = CU_MEM_LOCATION_TYPE_HOST;
        loc.id = 0;
    } else {
        loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
        loc.id = (int)dev;
    }
    return loc;
}

static inline CUresult whestbake_cuMemAdvise(CUdeviceptr ptr, size_t n, CUmem_advise advice, CUdevice dev)
{
    return cuMemAdvise_v2(ptr, n, advice, whestbake_location(dev));
}

static inline CUresult whestbake_cuMemPrefetchAsync(CUdeviceptr ptr, size_t n, CUdevice dev, CUstream stream)
{
    return cuMemPrefetchAsync_v2(ptr, n, whestbake_location(dev), 0, stream);
}

/* NULL edge data means default edges, which is what the old calls had. */
static inline CUresult whestbake_cuGraphAddDependencies(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, size_t n)
{
    return cuGraphAddDependencies_v2(g, from, to, NULL, n);
}

static inline CUresult whestbake_cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n)
{
    return cuGraphGetEdges_v2(g, from, to, NULL, n);
}

#undef cuCtxCreate
#define cuCtxCreate whestbake_cuCtxCreate
#undef cuMemAdvise
#define cuMemAdvise whestbake_cuMemAdvise
#undef cuMemPrefetchAsync
#define cuMemPrefetchAsync whestbake_cuMemPrefetchAsync
#undef cuGraphAddDependencies
#define cuGraphAddDependencies whestbake_cuGraphAddDependencies
#undef cuGraphGetEdges
#define cuGraphGetEdges whestbake_cuGraphGetEdges

#endif /* CUDA_VERSION >= 13000 */
#endif
