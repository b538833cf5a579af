/* Records how the stand-in CUDA 13 entry points were called. */
#include <stdio.h>
#include "cuda.h"

static const char *loc(CUmemLocation l) { return l.type == CU_MEM_LOCATION_TYPE_HOST ? "host" : l.type == CU_MEM_LOCATION_TYPE_DEVICE ? "device" : "invalid"; }
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev)
{ (void)pctx; printf("cuCtxCreate_v4 params=%s flags=%u dev=%d\n", params ? "set" : "null", flags, dev); return 0; }
CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation l)
{ printf("cuMemAdvise_v2 ptr=%llu n=%zu advice=%d %s %d\n", p, n, (int)advice, loc(l), l.id); return 0; }
CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation l, unsigned int flags, CUstream s)
{ (void)s; printf("cuMemPrefetchAsync_v2 ptr=%llu n=%zu %s %d flags=%u\n", p, n, loc(l), l.id, flags); return 0; }
CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *e, size_t n)
{ (void)g; (void)from; (void)to; printf("cuGraphAddDependencies_v2 edges=%s n=%zu\n", e ? "set" : "null", n); return 0; }
CUresult cuGraphGetEdges_v2(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *e, size_t *n)
{ (void)g; (void)from; (void)to; printf("cuGraphGetEdges_v2 edges=%s n=%zu\n", e ? "set" : "null", *n); return 0; }
