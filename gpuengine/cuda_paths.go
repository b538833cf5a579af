package gpuengine

// CUDA paths: all take their inputs from the philox sampler and combine tiles exactly.
const (
	// CUDAPathFused is mlp_fused: inputs, layers and statistics in one kernel,
	// bit-identical to the CPU twin. The default.
	CUDAPathFused = "fused"
	// CUDAPathCuBLAS runs every layer as a cublasSgemm on fixed-shape chunks; cuBLAS owns
	// the k order, so results are within ~1e-6 relative of the CPU twin, not identical.
	CUDAPathCuBLAS = "cublas"
	// CUDAPathReference is the cuBLAS pipeline with the GEMM replaced by the forward
	// contract's plain fma chain: slow, bit-identical, for isolating kernel faults.
	CUDAPathReference = "reference"
)

// CUDAPathEnv selects the path of the engine --device cuda opens; the default is fused.
const CUDAPathEnv = "WHESTBAKE_CUDA_PATH"
