/* Records how the stand-in CUDA 12 entry points were called. */
#include <stdio.h>
#include "cuda.h"

CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev)
{ (void)pctx; printf("cuCtxCreate_v2 flags=%u dev=%d\n", flags, dev); return 0; }
CUresult cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice dev)
{ printf("cuMemAdvise ptr=%llu n=%zu advice=%d dev=%d\n", p, n, (int)advice, dev); return 0; }
CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice dev, CUstream s)
{ (void)s; printf("cuMemPrefetchAsync ptr=%llu n=%zu dev=%d\n", p, n, dev); return 0; }
CUresult cuGraphAddDependencies(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, size_t n)
{ (void)g; (void)from; (void)to; printf("cuGraphAddDependencies n=%zu\n", n); return 0; }
CUresult cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n)
{ (void)g; (void)from; (void)to; printf("cuGraphGetEdges n=%zu\n", *n); return 0; }
