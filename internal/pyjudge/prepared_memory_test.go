package pyjudge

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset"
)

// oneBatchPy rewrites the Arrow stream argv[1] with pyarrow as one record
// batch of all its rows.
const oneBatchPy = `
import sys
import pyarrow as pa
p = sys.argv[1]
with open(p, "rb") as f:
    t = pa.ipc.open_stream(f.read()).read_all().combine_chunks()
with pa.OSFile(p, "wb") as f:
    with pa.ipc.new_stream(f, t.schema) as w:
        w.write_table(t, max_chunksize=t.num_rows)
with open(p, "rb") as f:
    print([b.num_rows for b in pa.ipc.open_stream(f.read())])
`

// The check holds a row, not a record batch: while the rows of a split of
// 8,000 MLPs stream by, written by pyarrow as one record batch of about
// 50 MB, the live heap stays within a few MiB of where it started.
func TestPreparedCheckHoldsARowOfAManyRowBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 150 MB")
	}
	env := Need(t)
	ds := combineBaked(t, t.TempDir(), 16, 4, 8000, 1)
	arrow := filepath.Join(ds, dataset.PreparedDir, "public", dataset.PreparedArrowFile)
	if out := env.PythonOK(t, Cmd{}, oneBatchPy, arrow).Stdout; strings.TrimSpace(out) != "[8000]" {
		t.Fatalf("pyarrow wrote batches of %s rows", out)
	}
	d, err := dataset.Open(ds, false)
	if err != nil {
		t.Fatal(err)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapAlloc, uint64(0)
	err = d.ScanPrepared(func(_ *dataset.SplitData, r dataset.Row) error {
		if r.MLPID%500 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(arrow)
	if err != nil {
		t.Fatal(err)
	}
	const bound = 8 << 20
	grew := int64(peak) - int64(base)
	t.Logf("the live heap grew by %d bytes checking a %d-byte record batch", grew, st.Size())
	if grew > bound || st.Size() < 5*bound {
		t.Errorf("the live heap grew by %d bytes checking a %d-byte record batch (bound %d)",
			grew, st.Size(), bound)
	}
}
