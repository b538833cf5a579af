/* Stand-in for the CUDA 13.0 cuda.h declarations the shim bridges (signatures as
 * documented for 13.0: cuCtxCreate_v4, cuMemAdvise_v2, cuMemPrefetchAsync_v2,
 * cuGraphAddDependencies_v2, cuGraphGetEdges_v2, and the default names as macros). */
#ifndef MOCK_CUDA_H
#define MOCK_CUDA_H
#include <stddef.h>
#define CUDA_VERSION 13000
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef struct CUctxCreateParams_st CUctxCreateParams;
typedef struct CUgraphEdgeData_st { unsigned char type; } CUgraphEdgeData;
typedef enum { CU_MEM_ADVISE_SET_READ_MOSTLY = 1 } CUmem_advise;
typedef enum { CU_MEM_LOCATION_TYPE_INVALID = 0, CU_MEM_LOCATION_TYPE_DEVICE = 1, CU_MEM_LOCATION_TYPE_HOST = 2 } CUmemLocationType;
typedef struct { CUmemLocationType type; int id; } CUmemLocation;
#define CU_DEVICE_CPU ((CUdevice)-1)
CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev);
CUresult cuMemAdvise_v2(CUdeviceptr p, size_t n, CUmem_advise advice, CUmemLocation loc);
CUresult cuMemPrefetchAsync_v2(CUdeviceptr p, size_t n, CUmemLocation loc, unsigned int flags, CUstream s);
CUresult cuGraphAddDependencies_v2(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, const CUgraphEdgeData *e, size_t n);
CUresult cuGraphGetEdges_v2(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *e, size_t *n);
#define cuCtxCreate cuCtxCreate_v4
#define cuMemAdvise cuMemAdvise_v2
#define cuMemPrefetchAsync cuMemPrefetchAsync_v2
#define cuGraphAddDependencies cuGraphAddDependencies_v2
#define cuGraphGetEdges cuGraphGetEdges_v2
#endif
