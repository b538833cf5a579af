package prepared

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"path/filepath"
	"unsafe"

	"github.com/whestbake/whestbake/dataset/internal/arrowipc"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/staging"
)

// SplitWriter writes one split's save_to_disk folder: the Arrow IPC
// stream, through an arrowEncoder, and then its two JSON files. Its rows
// come one at a time (Write), each a record batch of its own, so it holds
// a row however large the split.
type SplitWriter struct {
	dir, split string
	file       *os.File
	buf        *bufio.Writer
	sum        hash.Hash
	enc        *arrowEncoder
}

// NewSplitWriter starts the folder dir, which must not exist, of split,
// whose rows have width and depth. tee, if not nil, is written every byte
// of the Arrow file as well, in order, as it is written.
func NewSplitWriter(dir, split string, width, depth int, tee io.Writer) (*SplitWriter, error) {
	if err := schema.CheckShape(width, depth); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, ArrowFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	s := &SplitWriter{
		dir:   dir,
		split: split,
		file:  f,
		sum:   sha256.New(),
	}
	out := io.MultiWriter(f, s.sum)
	if tee != nil {
		out = io.MultiWriter(f, s.sum, tee)
	}
	s.buf = bufio.NewWriterSize(out, 1<<16)
	if s.enc, err = newArrowEncoder(s.buf, width, depth); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// Write appends r as the stream's next record batch.
func (s *SplitWriter) Write(r *schema.Row) error { return s.enc.write(r) }

// Abort closes the Arrow file of a folder that will not be finished; the
// caller removes the folder.
func (s *SplitWriter) Abort() { s.file.Close() }

// arrowEncoder encodes one split's rows as an Arrow IPC stream into out: the
// schema message, a record batch a row, the end-of-stream marker. The same
// rows always give the same bytes, which is what both writing the prepared
// tree and checking it rely on.
type arrowEncoder struct {
	width, depth int
	out          io.Writer
	scratch      []byte
}

// newArrowEncoder starts a stream of width w and depth d in out: it writes
// the schema message.
func newArrowEncoder(out io.Writer, w, d int) (*arrowEncoder, error) {
	e := &arrowEncoder{width: w, depth: d, out: out}
	if _, err := out.Write(schema.ArrowSchemaMessage(w, d)); err != nil {
		return nil, err
	}
	return e, nil
}

// end writes the end-of-stream marker.
func (e *arrowEncoder) end() error {
	_, err := e.out.Write(arrowipc.EndOfStream())
	return err
}

// write appends r as a record batch of one row. The buffers follow the
// schema's fields in pre-order, each as the Arrow columnar format lays it
// out: a validity bitmap (empty: no value is null), then offsets and values
// as the type has them.
func (e *arrowEncoder) write(r *schema.Row) error {
	if err := r.Check(e.width, e.depth); err != nil {
		return err
	}
	bufs := e.rowBuffers(r)
	lens := make([]int64, len(bufs))
	for i, b := range bufs {
		lens[i] = b.size
	}
	msg, _ := arrowipc.RecordBatchMessage(1, rowNodes(int64(e.width), int64(e.depth)), lens)
	if _, err := e.out.Write(msg); err != nil {
		return err
	}
	var pad [arrowipc.Alignment]byte
	for _, b := range bufs {
		if err := b.write(); err != nil {
			return err
		}
		if _, err := e.out.Write(pad[:arrowipc.Padded(b.size)-b.size]); err != nil {
			return err
		}
	}
	return nil
}

// rowNodes are the field nodes of a one-row record batch of width w and
// depth d, in the schema's pre-order.
func rowNodes(w, d int64) []arrowipc.FieldNode {
	node := func(n int64) arrowipc.FieldNode { return arrowipc.FieldNode{Length: n} }
	return []arrowipc.FieldNode{
		node(1),                                        // mlp_id
		node(1),                                        // mlp_name
		node(1),                                        // mlp_seed
		node(1), node(d), node(d * w), node(d * w * w), // weights: list<list<list<float>>>
		node(1), node(d), node(d * w), // all_layer_means: list<list<float>>
		node(1), node(w), // final_means: fixed_size_list<float>[w]
		node(1), // avg_variance
		node(1), // sampling_budget_breakdown
	}
}

// arrowBuffer is one buffer of a record batch: its length, and a function
// that writes it. Each buffer is written by a function, so that the values go
// from the row to the file through a small scratch buffer, never a second copy
// of the row.
type arrowBuffer struct {
	size  int64
	write func() error
}

// noBuffer is an empty buffer: a validity bitmap when no value is null.
var noBuffer = arrowBuffer{0, func() error { return nil }}

// rowBuffers are r's buffers, in the order of rowNodes' fields.
func (e *arrowEncoder) rowBuffers(r *schema.Row) []arrowBuffer {
	w, d := int64(e.width), int64(e.depth)
	var bufs []arrowBuffer
	bufs = append(bufs, noBuffer, e.fixed(4, func(b []byte) {
		binary.LittleEndian.PutUint32(b, uint32(r.MLPID))
	}))
	bufs = append(bufs, e.text(r.Name)...)
	bufs = append(bufs, noBuffer, e.fixed(8, func(b []byte) {
		binary.LittleEndian.PutUint64(b, uint64(r.Seed))
	}))
	bufs = append(bufs,
		noBuffer, e.offsets(1, d),
		noBuffer, e.offsets(d, w),
		noBuffer, e.offsets(d*w, w),
		noBuffer, e.floats(r.Weights))
	bufs = append(bufs,
		noBuffer, e.offsets(1, d),
		noBuffer, e.offsets(d, w),
		noBuffer, e.floats(r.LayerMeans))
	bufs = append(bufs, noBuffer, noBuffer, e.floats(r.FinalMeans))
	bufs = append(bufs, noBuffer, e.fixed(8, func(b []byte) {
		binary.LittleEndian.PutUint64(b, math.Float64bits(r.AvgVariance))
	}))
	bufs = append(bufs, e.text(r.Breakdown)...)
	return bufs
}

// offsets is a buffer of count+1 int32 offsets 0, step, 2·step, ….
func (e *arrowEncoder) offsets(count, step int64) arrowBuffer {
	return arrowBuffer{4 * (count + 1), func() error {
		for from := int64(0); from <= count; from += scratchValues {
			n := min(count+1-from, scratchValues)
			b := e.grow(int(4 * n))
			for i := range n {
				binary.LittleEndian.PutUint32(b[4*i:], uint32((from+i)*step))
			}
			if _, err := e.out.Write(b); err != nil {
				return err
			}
		}
		return nil
	}}
}

// floats is a buffer of v's values. Arrow's are little-endian IEEE 754,
// which is how a little-endian host holds them: there the values' own
// memory is the buffer (the writers it goes to copy or read it, none keeps
// it), and the values are not encoded one by one.
func (e *arrowEncoder) floats(v []float32) arrowBuffer {
	return arrowBuffer{4 * int64(len(v)), func() error {
		if littleEndian && len(v) > 0 {
			_, err := e.out.Write(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v)))
			return err
		}
		for len(v) > 0 {
			n := min(len(v), scratchValues)
			b := e.grow(4 * n)
			for i, x := range v[:n] {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
			}
			if _, err := e.out.Write(b); err != nil {
				return err
			}
			v = v[n:]
		}
		return nil
	}}
}

// littleEndian says whether this host holds numbers as Arrow writes them.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// fixed is a buffer of n bytes that put fills.
func (e *arrowEncoder) fixed(n int, put func([]byte)) arrowBuffer {
	return arrowBuffer{int64(n), func() error {
		b := e.grow(n)
		put(b)
		_, err := e.out.Write(b)
		return err
	}}
}

// text is the three buffers of a one-value string column holding t.
func (e *arrowEncoder) text(t string) []arrowBuffer {
	return []arrowBuffer{noBuffer, e.offsets(1, int64(len(t))), {int64(len(t)), func() error {
		_, err := io.WriteString(e.out, t)
		return err
	}}}
}

// scratchValues bounds the 4-byte values encoded at a time (64 KiB).
const scratchValues = 16 << 10

// grow returns the scratch buffer resized to n bytes.
func (e *arrowEncoder) grow(n int) []byte {
	if cap(e.scratch) < n {
		e.scratch = make([]byte, n)
	}
	return e.scratch[:n]
}

// Close ends the stream and writes the folder's two JSON files.
func (s *SplitWriter) Close() error {
	err := s.enc.end()
	if err == nil {
		err = s.buf.Flush()
	}
	if err == nil {
		err = s.file.Sync()
	}
	if cerr := s.file.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dataset: writing %s: %w", filepath.Join(s.dir, ArrowFile), err)
	}
	info, err := InfoJSON(s.enc.width, s.enc.depth)
	if err != nil {
		return err
	}
	state, err := stateJSON(s.split, hex.EncodeToString(s.sum.Sum(nil)))
	if err != nil {
		return err
	}
	if err := staging.WriteNew(filepath.Join(s.dir, InfoFile), info); err != nil {
		return err
	}
	return staging.WriteNew(filepath.Join(s.dir, StateFile), state)
}

// InfoJSON and stateJSON are a save_to_disk folder's
// dataset_info.json and state.json, for a split of width w and depth d
// whose Arrow file has SHA-256 arrowSum.
//
// dataset_info.json is datasets' asdict(DatasetInfo) with the top-level keys
// sorted, json.dump(indent=2): the four string fields datasets always
// writes and the features; the fields that would record where and how the
// parquet was read (builder_name, download_checksums with local paths,
// sizes) are left out, as DatasetInfo allows, so the same rows give the
// same bytes. state.json is save_to_disk's state, json.dump(indent=2,
// sort_keys=True): no format set, the split's name, the one shard, and as
// fingerprint (which names datasets' cache files, at most 64 characters of
// no path separator) the first 16 hex digits of the Arrow file's SHA-256,
// in the 16-hex-digit form of datasets' own fingerprints.
func InfoJSON(w, d int) ([]byte, error) {
	return pyjson.Dumps(pyjson.NewObject().
		Set("citation", "").
		Set("description", "").
		Set("features", schema.Features(w, d)).
		Set("homepage", "").
		Set("license", ""), true)
}

func stateJSON(split, arrowSum string) ([]byte, error) {
	return pyjson.Dumps(pyjson.NewObject().
		Set("_data_files", []any{pyjson.NewObject().Set("filename", ArrowFile)}).
		Set("_fingerprint", arrowSum[:16]).
		Set("_format_columns", nil).
		Set("_format_kwargs", pyjson.NewObject()).
		Set("_format_type", nil).
		Set("_output_all_columns", false).
		Set("_split", split), true)
}
