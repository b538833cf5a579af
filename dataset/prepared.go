package dataset

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

	"github.com/whestbake/whestbake/dataset/internal/arrowipc"
)

// The prepared Arrow tree (whestbench's loader fast path): for each split
// of a multi-split dataset, prepared/<split>/ in the layout of the
// datasets library's Dataset.save_to_disk, which whestbench's loader opens
// with datasets.load_from_disk in preference to the parquet files, falling
// back to them silently when it cannot.
const (
	PreparedDir    = "prepared"
	PreparedFormat = "save_to_disk"
	// The one shard save_to_disk writes for a dataset under its
	// max_shard_size (500 MB) is data-00000-of-00001.arrow; one file a split
	// is what whestbench's prepared tree holds too, and load_from_disk reads
	// whatever state.json lists.
	preparedArrowFile = "data-00000-of-00001.arrow"
	preparedInfoFile  = "dataset_info.json"
	preparedStateFile = "state.json"
	// preparedStagingPrefix names PrepareArrow's temporary folders in the
	// dataset directory.
	preparedStagingPrefix = ".prepared.tmp-"
)

// PreparedPaths are the files of dataset directory's prepared tree for the
// splits names, '/'-separated and relative to the dataset directory.
func PreparedPaths(names []string) []string {
	var out []string
	for _, n := range names {
		for _, f := range []string{preparedArrowFile, preparedInfoFile, preparedStateFile} {
			out = append(out, PreparedDir+"/"+n+"/"+f)
		}
	}
	return out
}

// preparedSplits is the metadata's prepared_splits block for splits names,
// as whestbench writes it.
func preparedSplits(names []string) *Object {
	block := NewObject()
	for _, n := range names {
		block.Set(n, NewObject().Set("path", PreparedDir+"/"+n).Set("format", PreparedFormat))
	}
	return block
}

// writePrepared streams every split of d (opened, complete) into
// root/<split>/: the Arrow IPC stream, dataset_info.json and state.json.
// Scan checks the rows as it goes and holds one at a time, and each row is
// one record batch, so memory is a row however large the split.
func writePrepared(d *Dir, root string) error {
	if err := os.Mkdir(root, 0o755); err != nil {
		return err
	}
	var row Row // shared by every split, as in Scan
	for i := range d.Splits {
		sd := &d.Splits[i]
		st, err := newArrowStream(filepath.Join(root, sd.Name), sd.Name, sd.Width, sd.Depth)
		if err != nil {
			return err
		}
		err = d.scanSplit(sd, &d.Info.Splits[i], &row, func(_ *SplitData, r Row) error { return st.write(&r) })
		if err != nil {
			st.f.Close() // the caller removes the half-written tree
			return err
		}
		if err := st.close(); err != nil {
			return err
		}
	}
	return nil
}

// arrowStream writes one split's save_to_disk folder: the Arrow IPC
// stream, through an arrowEncoder, and then its two JSON files.
type arrowStream struct {
	dir, split string
	f          *os.File
	buf        *bufio.Writer
	sum        hash.Hash
	enc        *arrowEncoder
}

func newArrowStream(dir, split string, width, depth int) (*arrowStream, error) {
	if err := checkShape(width, depth); err != nil {
		return nil, err
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, preparedArrowFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	s := &arrowStream{dir: dir, split: split, f: f, sum: sha256.New()}
	s.buf = bufio.NewWriterSize(io.MultiWriter(f, s.sum), 1<<16)
	if s.enc, err = newArrowEncoder(s.buf, width, depth); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func (s *arrowStream) write(r *Row) error { return s.enc.write(r) }

// arrowEncoder encodes one split's rows as an Arrow IPC stream into w: the
// schema message, a record batch a row, the end-of-stream marker. The same
// rows always give the same bytes, which is what both writing the prepared
// tree and checking it rely on.
type arrowEncoder struct {
	width, depth int
	w            io.Writer
	scratch      []byte
}

// newArrowEncoder starts a stream of width w and depth d in out: it writes
// the schema message.
func newArrowEncoder(out io.Writer, w, d int) (*arrowEncoder, error) {
	e := &arrowEncoder{width: w, depth: d, w: out}
	if _, err := out.Write(arrowSchemaMessage(w, d)); err != nil {
		return nil, err
	}
	return e, nil
}

// end writes the end-of-stream marker.
func (e *arrowEncoder) end() error {
	_, err := e.w.Write(arrowipc.EndOfStream())
	return err
}

// write appends r as a record batch of one row. The buffers follow the
// schema's fields in pre-order, each as the Arrow columnar format lays it
// out: a validity bitmap (empty: no value is null), then offsets and values
// as the type has them.
func (e *arrowEncoder) write(r *Row) error {
	if err := r.check(e.width, e.depth); err != nil {
		return err
	}
	bufs := e.rowBuffers(r)
	lens := make([]int64, len(bufs))
	for i, b := range bufs {
		lens[i] = b.n
	}
	msg, _ := arrowipc.RecordBatchMessage(1, rowNodes(int64(e.width), int64(e.depth)), lens)
	if _, err := e.w.Write(msg); err != nil {
		return err
	}
	var pad [arrowipc.Alignment]byte
	for _, b := range bufs {
		if err := b.write(); err != nil {
			return err
		}
		if _, err := e.w.Write(pad[:arrowipc.Padded(b.n)-b.n]); err != nil {
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
	n     int64
	write func() error
}

// noBuffer is an empty buffer: a validity bitmap when no value is null.
var noBuffer = arrowBuffer{0, func() error { return nil }}

// rowBuffers are r's buffers, in the order of rowNodes' fields.
func (e *arrowEncoder) rowBuffers(r *Row) []arrowBuffer {
	w, d := int64(e.width), int64(e.depth)
	var bufs []arrowBuffer
	bufs = append(bufs, noBuffer, e.fixed(4, func(b []byte) { binary.LittleEndian.PutUint32(b, uint32(r.MLPID)) }))
	bufs = append(bufs, e.text(r.Name)...)
	bufs = append(bufs, noBuffer, e.fixed(8, func(b []byte) { binary.LittleEndian.PutUint64(b, uint64(r.Seed)) }))
	bufs = append(bufs, noBuffer, e.offsets(1, d), noBuffer, e.offsets(d, w), noBuffer, e.offsets(d*w, w), noBuffer, e.floats(r.Weights))
	bufs = append(bufs, noBuffer, e.offsets(1, d), noBuffer, e.offsets(d, w), noBuffer, e.floats(r.LayerMeans))
	bufs = append(bufs, noBuffer, noBuffer, e.floats(r.FinalMeans))
	bufs = append(bufs, noBuffer, e.fixed(8, func(b []byte) { binary.LittleEndian.PutUint64(b, math.Float64bits(r.AvgVariance)) }))
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
			if _, err := e.w.Write(b); err != nil {
				return err
			}
		}
		return nil
	}}
}

// floats is a buffer of v's values.
func (e *arrowEncoder) floats(v []float32) arrowBuffer {
	return arrowBuffer{4 * int64(len(v)), func() error {
		for len(v) > 0 {
			n := min(len(v), scratchValues)
			b := e.grow(4 * n)
			for i, x := range v[:n] {
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
			}
			if _, err := e.w.Write(b); err != nil {
				return err
			}
			v = v[n:]
		}
		return nil
	}}
}

// fixed is a buffer of n bytes that put fills.
func (e *arrowEncoder) fixed(n int, put func([]byte)) arrowBuffer {
	return arrowBuffer{int64(n), func() error {
		b := e.grow(n)
		put(b)
		_, err := e.w.Write(b)
		return err
	}}
}

// text is the three buffers of a one-value string column holding t.
func (e *arrowEncoder) text(t string) []arrowBuffer {
	return []arrowBuffer{noBuffer, e.offsets(1, int64(len(t))), {int64(len(t)), func() error {
		_, err := io.WriteString(e.w, t)
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

// close ends the stream and writes the folder's two JSON files.
func (s *arrowStream) close() error {
	err := s.enc.end()
	if err == nil {
		err = s.buf.Flush()
	}
	if err == nil {
		err = s.f.Sync()
	}
	if cerr := s.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dataset: writing %s: %w", filepath.Join(s.dir, preparedArrowFile), err)
	}
	info, err := preparedInfoJSON(s.enc.width, s.enc.depth)
	if err != nil {
		return err
	}
	state, err := preparedStateJSON(s.split, hex.EncodeToString(s.sum.Sum(nil)))
	if err != nil {
		return err
	}
	if err := writeFileSync(filepath.Join(s.dir, preparedInfoFile), info); err != nil {
		return err
	}
	return writeFileSync(filepath.Join(s.dir, preparedStateFile), state)
}

// preparedInfoJSON and preparedStateJSON are a save_to_disk folder's
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
func preparedInfoJSON(w, d int) ([]byte, error) {
	return pyDumps(NewObject().
		Set("citation", "").
		Set("description", "").
		Set("features", features(w, d)).
		Set("homepage", "").
		Set("license", ""), true)
}

func preparedStateJSON(split, arrowSum string) ([]byte, error) {
	return pyDumps(NewObject().
		Set("_data_files", []any{NewObject().Set("filename", preparedArrowFile)}).
		Set("_fingerprint", arrowSum[:16]).
		Set("_format_columns", nil).
		Set("_format_kwargs", NewObject()).
		Set("_format_type", nil).
		Set("_output_all_columns", false).
		Set("_split", split), true)
}

// PrepareArrow (re)builds the prepared Arrow tree of the complete
// multi-split dataset in dir (whestbench's `dataset prepare-arrow`) and
// records it as prepared_splits in metadata.json. The new tree is built in
// a temporary folder in dir and takes prepared/'s place at once, so a
// reader sees the old tree or the new one; metadata.json is replaced by a
// rename after that. Staging folders left by an interrupted run are
// removed first. A prepared/ folder that holds anything besides the files
// prepare-arrow writes for the dataset's splits is refused, not replaced.
func PrepareArrow(dir string) (err error) {
	d, err := Open(dir, false)
	if err != nil {
		return err
	}
	if err := d.Info.CheckLoadable(); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if !d.Info.MultiSplit {
		return invalidf("%s: prepare-arrow is only meaningful for multi-split datasets (no 'splits' block found in metadata.json); combine the split with `whestbake dataset combine-splits` first", filepath.Join(dir, MetadataFile))
	}
	names := make([]string, len(d.Splits))
	for i, s := range d.Splits {
		names[i] = s.Name
	}
	// The new tree replaces prepared/ whole: refuse to delete what an
	// operator put there (as the report refuses, CheckReportFolder).
	foreign, err := foreignPrepared(dir, names)
	if err != nil {
		return err
	}
	if len(foreign) > 0 {
		return invalidf("%s holds %q, which prepare-arrow did not write: the new tree replaces the "+
			"folder whole and would delete them; move them out of %s and run again",
			filepath.Join(dir, PreparedDir), foreign, PreparedDir+"/")
	}
	if err := removeStaging(dir, preparedStagingPrefix); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(dir, preparedStagingPrefix)
	if err != nil {
		return fmt.Errorf("dataset: %w", err)
	}
	defer func() {
		if rmErr := os.RemoveAll(tmp); err == nil && rmErr != nil {
			err = rmErr
		}
	}()
	staged := filepath.Join(tmp, PreparedDir)
	if err := writePrepared(d, staged); err != nil {
		return err
	}
	if err := swap(staged, filepath.Join(dir, PreparedDir)); err != nil {
		return fmt.Errorf("dataset: putting the prepared tree in place: %w", err)
	}
	d.Meta.Set("prepared_splits", preparedSplits(names))
	data, err := encodeMetadata(d.Meta)
	if err != nil {
		return err
	}
	return replaceFile(filepath.Join(dir, MetadataFile), data)
}
