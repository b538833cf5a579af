/* Stand-in for the CUDA 12 declarations of the five calls (the signatures gorgonia.org/cu
 * v0.9.6 was written against). */
#ifndef MOCK_CUDA_H
#define MOCK_CUDA_H
#include <stddef.h>
#define CUDA_VERSION 12060
typedef int CUresult;
typedef int CUdevice;
typedef struct CUctx_st *CUcontext;
typedef unsigned long long CUdeviceptr;
typedef struct CUstream_st *CUstream;
typedef struct CUgraph_st *CUgraph;
typedef struct CUgraphNode_st *CUgraphNode;
typedef enum { CU_MEM_ADVISE_SET_READ_MOSTLY = 1 } CUmem_advise;
#define CU_DEVICE_CPU ((CUdevice)-1)
CUresult cuCtxCreate_v2(CUcontext *pctx, unsigned int flags, CUdevice dev);
#define cuCtxCreate cuCtxCreate_v2
CUresult cuMemAdvise(CUdeviceptr p, size_t n, CUmem_advise advice, CUdevice dev);
CUresult cuMemPrefetchAsync(CUdeviceptr p, size_t n, CUdevice dev, CUstream s);
CUresult cuGraphAddDependencies(CUgraph g, const CUgraphNode *from, const CUgraphNode *to, size_t n);
CUresult cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to, size_t *n);
#endif
