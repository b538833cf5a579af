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
	"github.com/whestbake/whestbake/internal/shards"
)

// SplitWriter writes one split's save_to_disk folder: its Arrow shards,
// data-NNNNN-of-MMMMM.arrow cut as package shards cuts the split, one
// shard unless the split is larger than a shard may be, each an Arrow IPC
// stream through an arrowEncoder, and then its two JSON files. Its rows
// come one at a time through Write, each a record batch of its own, so it holds
// a row however large the split.
type SplitWriter struct {
	dir, split string
	stream     *shardStream
	sum        hash.Hash // of every shard's bytes, in order
	tee        shards.Tee
	open       *arrowShard
}

// arrowShard is the shard being written.
type arrowShard struct {
	path string
	file *os.File
	buf  *bufio.Writer
	size shards.Counter
	tee  io.WriteCloser
}

// NewSplitWriter starts the folder dir, which must not exist, of split,
// which has rows rows of width and depth. tee, if not nil, is handed each
// Arrow shard as it is written, as a shards.Tee.
func NewSplitWriter(
	dir, split string,
	width, depth int,
	rows int64,
	tee shards.Tee,
) (*SplitWriter, error) {
	if err := schema.CheckShape(width, depth); err != nil {
		return nil, err
	}
	plan, err := Split{Name: split, Width: width, Depth: depth, Rows: rows}.plan()
	if err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	s := &SplitWriter{dir: dir, split: split, sum: sha256.New(), tee: tee}
	s.stream = newShardStream(plan, width, depth, s.start, s.finish)
	return s, nil
}

// start creates shard i's file, and hands it to the tee.
func (s *SplitWriter) start(i int) (io.Writer, error) {
	a := &arrowShard{path: filepath.Join(s.dir, s.stream.name(i))}
	f, err := os.OpenFile(a.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	a.file = f
	s.open = a
	out := io.MultiWriter(f, s.sum)
	if s.tee != nil {
		if a.tee, err = s.tee(a.path); err != nil {
			return nil, err
		}
		out = io.MultiWriter(f, s.sum, a.tee)
	}
	a.size.W = out
	a.buf = bufio.NewWriterSize(&a.size, 1<<16)
	return a.buf, nil
}

// finish completes shard i once its stream is written: flushed, its size
// checked, synced and closed, and then its tee closed.
func (s *SplitWriter) finish(i int) error {
	a := s.open
	err := a.buf.Flush()
	if err == nil {
		err = shards.CheckSize(a.size.N, s.stream.plan.Len(i))
	}
	if err == nil {
		err = a.file.Sync()
	}
	if cerr := a.file.Close(); err == nil {
		err = cerr
	}
	s.open = nil
	if err != nil {
		return fmt.Errorf("dataset: writing %s: %w", a.path, err)
	}
	if a.tee != nil {
		return a.tee.Close()
	}
	return nil
}

// Write appends r as the next record batch of its shard's stream.
func (s *SplitWriter) Write(r *schema.Row) error { return s.stream.write(r) }

// Abort closes the Arrow file of a folder that will not be finished; the
// caller removes the folder, and gives up the tee of the open shard.
func (s *SplitWriter) Abort() {
	if s.open != nil {
		s.open.file.Close()
		s.open = nil
	}
}

// shardStream encodes a split's rows as its Arrow shards, cut by plan:
// each shard a stream of its own of the schema message, a record batch a
// row and the end-of-stream marker, as save_to_disk writes a file a shard.
// open gives shard i's writer before its first byte; done is called once
// its last byte is written. The writer and the check of a prepared folder
// both encode through it, so they cut the stream alike.
type shardStream struct {
	plan         shards.Plan
	width, depth int
	open         func(i int) (io.Writer, error)
	done         func(i int) error
	enc          *arrowEncoder // the open shard's; nil between shards
	next         int           // the shard to open next
	left         int64         // rows the open shard still takes
}

func newShardStream(
	plan shards.Plan,
	width, depth int,
	open func(int) (io.Writer, error),
	done func(int) error,
) *shardStream {
	return &shardStream{plan: plan, width: width, depth: depth, open: open, done: done}
}

// name is shard i's file name, as save_to_disk names it.
func (s *shardStream) name(i int) string { return s.plan.Name("data", i, "arrow") }

// names are every shard's file names, in order.
func (s *shardStream) names() []string {
	out := make([]string, s.plan.Count)
	for i := range out {
		out[i] = s.name(i)
	}
	return out
}

// full reports whether the open shard has taken its rows: its
// end-of-stream marker is what the stream writes next.
func (s *shardStream) full() bool { return s.enc != nil && s.left == 0 }

// ready gets the stream ready for a row: a full shard is ended, and the
// next one opened, its schema message written, if none is open.
func (s *shardStream) ready() error {
	if s.full() {
		if err := s.end(); err != nil {
			return err
		}
	}
	if s.enc != nil {
		return nil
	}
	if s.next == s.plan.Count {
		return schema.Errorf("the split holds more rows than the %d of its metadata's n_mlps",
			s.plan.Rows)
	}
	out, err := s.open(s.next)
	if err != nil {
		return err
	}
	s.left = s.plan.Len(s.next)
	s.next++
	s.enc, err = newArrowEncoder(out, s.width, s.depth)
	return err
}

// write appends r to its shard.
func (s *shardStream) write(r *schema.Row) error {
	if err := s.ready(); err != nil {
		return err
	}
	if err := s.enc.write(r); err != nil {
		return err
	}
	s.left--
	return nil
}

// end writes the open shard's end-of-stream marker and hands it to done.
func (s *shardStream) end() error {
	err := s.enc.end()
	s.enc = nil
	if err != nil {
		return err
	}
	return s.done(s.next - 1)
}

// close ends the stream once every row was written: the one shard of an
// empty split is opened and ended here.
func (s *shardStream) close() error {
	if s.plan.Rows == 0 && s.next == 0 {
		if err := s.ready(); err != nil {
			return err
		}
	}
	if !s.full() || s.next < s.plan.Count {
		return schema.Errorf("the split holds fewer rows than the %d of its metadata's n_mlps",
			s.plan.Rows)
	}
	return s.end()
}

// arrowEncoder encodes one split's rows as an Arrow IPC stream into out: the
// schema message, a record batch a row, the end-of-stream marker. The same
// rows always give the same bytes, which is what both writing the prepared
// tree and checking it rely on.
type arrowEncoder struct {
	width, depth int
	out          io.Writer
	nodes        []arrowipc.FieldNode       // rowNodes
	dims         [schema.NumColumns][]int64 // arrayDims
	scratch      []byte
}

// newArrowEncoder starts a stream of width w and depth d in out: it writes
// the schema message.
func newArrowEncoder(out io.Writer, w, d int) (*arrowEncoder, error) {
	e := &arrowEncoder{width: w, depth: d, out: out, nodes: rowNodes(w, d), dims: arrayDims(w, d)}
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
// out: a validity bitmap, empty as no value is null, then offsets and values
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
	msg, _ := arrowipc.RecordBatchMessage(1, e.nodes, lens)
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
// depth d, in the schema's pre-order: a column's node of one value, and
// an array's node a level, holding the values of that level in the row.
func rowNodes(w, d int) []arrowipc.FieldNode {
	var nodes []arrowipc.FieldNode
	for i := range schema.Columns {
		nodes = append(nodes, arrowipc.FieldNode{Length: 1})
		n := int64(1)
		for _, dim := range schema.Columns[i].Dims(w, d) {
			n *= int64(dim)
			nodes = append(nodes, arrowipc.FieldNode{Length: n})
		}
	}
	return nodes
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
	var bufs []arrowBuffer
	for i := range schema.Columns {
		bufs = e.appendColumn(bufs, i, r)
	}
	return bufs
}

// appendColumn appends column col's buffers of r to bufs, as the columnar
// format lays its type out: a scalar's validity bitmap and its value, for a
// string its offsets and bytes; a fixed-size list's bitmap and its items';
// a nested list's bitmap and offsets a level, and its items'.
func (e *arrowEncoder) appendColumn(bufs []arrowBuffer, col int, r *schema.Row) []arrowBuffer {
	c := &schema.Columns[col]
	switch p := c.Of(r).(type) {
	case *int32:
		return append(bufs, noBuffer, e.fixed(4, func(b []byte) {
			binary.LittleEndian.PutUint32(b, uint32(*p))
		}))
	case *int64:
		return append(bufs, noBuffer, e.fixed(8, func(b []byte) {
			binary.LittleEndian.PutUint64(b, uint64(*p))
		}))
	case *float64:
		return append(bufs, noBuffer, e.fixed(8, func(b []byte) {
			binary.LittleEndian.PutUint64(b, math.Float64bits(*p))
		}))
	case *string:
		return append(bufs, e.text(*p)...)
	}
	dims := e.dims[col]
	if len(dims) == 1 {
		return append(bufs, noBuffer, noBuffer, e.floats(c.Floats(r)))
	}
	count := int64(1)
	for _, n := range dims {
		bufs = append(bufs, noBuffer, e.offsets(count, n))
		count *= n
	}
	return append(bufs, noBuffer, e.floats(c.Floats(r)))
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
// memory is the buffer, since the writers it goes to copy or read it and
// none keeps it, and the values are not encoded one by one.
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

// scratchValues bounds the 4-byte values encoded at a time, to 64 KiB.
const scratchValues = 16 << 10

// grow returns the scratch buffer resized to n bytes.
func (e *arrowEncoder) grow(n int) []byte {
	if cap(e.scratch) < n {
		e.scratch = make([]byte, n)
	}
	return e.scratch[:n]
}

// Close ends the last shard and writes the folder's two JSON files.
func (s *SplitWriter) Close() error {
	if err := s.stream.close(); err != nil {
		return err
	}
	info, err := InfoJSON(s.stream.width, s.stream.depth)
	if err != nil {
		return err
	}
	state, err := stateJSON(s.split, s.stream.names(), hex.EncodeToString(s.sum.Sum(nil)))
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
// parquet was read, builder_name, download_checksums with local paths and
// sizes, are left out, as DatasetInfo allows, so the same rows give the
// same bytes. state.json is save_to_disk's state, json.dump(indent=2,
// sort_keys=True): no format set, the split's name, its shards in order,
// and as fingerprint the first 16 hex digits of the SHA-256 of the shards'
// bytes one after the other, in the 16-hex-digit form of datasets' own
// fingerprints. For a split of one shard that is the Arrow file's. The
// fingerprint names datasets' cache files: at most 64 characters, no path
// separator.
func InfoJSON(w, d int) ([]byte, error) {
	return pyjson.Dumps(pyjson.NewObject().
		Set("citation", "").
		Set("description", "").
		Set("features", schema.Features(w, d)).
		Set("homepage", "").
		Set("license", ""), true)
}

func stateJSON(split string, files []string, arrowSum string) ([]byte, error) {
	listed := make([]any, len(files))
	for i, f := range files {
		listed[i] = pyjson.NewObject().Set("filename", f)
	}
	return pyjson.Dumps(pyjson.NewObject().
		Set("_data_files", listed).
		Set("_fingerprint", arrowSum[:16]).
		Set("_format_columns", nil).
		Set("_format_kwargs", pyjson.NewObject()).
		Set("_format_type", nil).
		Set("_output_all_columns", false).
		Set("_split", split), true)
}
