package rows

import (
	"fmt"
	"math"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/bytesize"
)

// Memory a bake process needs beside its rows, its parquet writer and its
// engine: the Go runtime, the Temporal and S3 clients, parquet metadata.
const baseBytes = 64 << 20

// MemoryNeed estimates the peak memory of baking MLPs of spec on threads CPU
// threads and writing them as a dataset: the rows in flight, a batch of
// Baker.Stream's or one row when rows are large; what the writer holds beside
// them, dataset.WriterBytes; the engine's buffers; and the garbage collector's
// headroom, since Go lets the heap grow to twice what is live before
// collecting. It does not grow with the number of MLPs.
func MemoryNeed(spec bakeapi.Spec, threads int) int64 {
	threads = max(1, threads)
	rows := int64(batchSize(spec, threads, math.MaxInt)) * dataset.RowBytes(spec)
	live := baseBytes + rows + dataset.WriterBytes(spec) + gpuengine.HostBytes(spec, threads)
	return 2 * live
}

// CheckMemory refuses a bake whose estimated need exceeds limit bytes, with
// the estimate and what to change.
func CheckMemory(spec bakeapi.Spec, threads int, limit int64) error {
	need := MemoryNeed(spec, threads)
	if limit <= 0 || need <= limit {
		return nil
	}
	return fmt.Errorf(
		"a %d×%d MLP needs about %s of memory to bake and write (one row alone is %s), "+
			"above the %s this process may use: "+
			"lower width or depth, or run on a machine with more memory",
		spec.Width,
		spec.Depth,
		bytesize.Format(need),
		bytesize.Format(dataset.RowBytes(spec)),
		bytesize.Format(limit),
	)
}
