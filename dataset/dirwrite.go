package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/staging"
	"github.com/whestbake/whestbake/internal/shards"
)

const (
	// DataDir is the folder of a dataset's parquet shards.
	DataDir    = "data"
	readmeFile = "README.md"
)

// OutputExistsError refuses to write over an existing output directory.
// errors.Is(err, fs.ErrExist) holds for it.
type OutputExistsError struct{ Path string }

func (e *OutputExistsError) Error() string {
	return fmt.Sprintf("output directory %s already exists; choose another --output or remove it",
		e.Path)
}

func (e *OutputExistsError) Is(target error) bool { return target == fs.ErrExist }

// CheckOutputFree fails if dir exists, even as an empty directory. The CLI
// calls it before any compute so a long bake is never wasted on an output
// it could not write; the writers call it again before touching the disk.
func CheckOutputFree(dir string) error {
	_, err := os.Lstat(dir)
	switch {
	case err == nil:
		return &OutputExistsError{Path: dir}
	case errors.Is(err, fs.ErrNotExist):
		return nil
	}
	return fmt.Errorf("dataset: cannot check output directory %s: %w", dir, err)
}

// WriteDir writes a single-split dataset, complete or partial, to dir:
// data/<split>-NNNNN-of-MMMMM.parquet, metadata.json and README.md. There
// is one shard unless the split is larger than a shard may be, as package
// shards decides. The split is md's "split", by default "public". Of spec, only
// Width and Depth reach the files here; md records the rest. It refuses
// an existing dir before doing anything, builds everything in a temporary
// directory beside dir and renames it into place at the end, so a failure
// leaves nothing behind.
func WriteDir(dir string, md Metadata, spec bakeapi.Spec, rows []Row) error {
	return writeSingleSplit(dir, splitWrite{md: md, spec: spec, card: true,
		fill: func(w *splitWriter) error { return w.Write(rows...) }})
}

// WriteDirStream is WriteDir with the rows produced one at a time: produce
// calls write once per row, in order, and the writer holds one row at a
// time, so memory stays bounded by a row however many rows the split has.
func WriteDirStream(
	dir string,
	md Metadata,
	spec bakeapi.Spec,
	produce func(write func(Row) error) error,
) error {
	return writeSingleSplit(dir, splitWrite{md: md, spec: spec, card: true, fill: streamFill(produce)})
}

// WriteIntermediateStream is WriteDirStream for a directory that only
// whestbake reads back, such as a Temporal bake's slice, which its merge consumes:
// it has no README.md. The card is for the people and tools that load a
// published dataset; leaving it out of an intermediate saves a file of
// about 5 KB per slice, which dominates a one-MLP slice of a small shape.
func WriteIntermediateStream(
	dir string,
	md Metadata,
	spec bakeapi.Spec,
	produce func(write func(Row) error) error,
) error {
	return writeSingleSplit(dir, splitWrite{md: md, spec: spec, fill: streamFill(produce)})
}

func streamFill(produce func(write func(Row) error) error) func(w *splitWriter) error {
	return func(w *splitWriter) error {
		return produce(func(r Row) error { return w.Write(r) })
	}
}

// ShardTee is what a writer hands each parquet shard or prepared Arrow
// shard to as it is written: see shards.Tee.
type ShardTee = shards.Tee

// splitWrite is what writeSingleSplit writes: the rows that fill writes,
// the metadata md, and the README.md card only if card is set. tee, if not
// nil, is handed every parquet shard as it is written: a merge streams them
// to S3 as it goes.
type splitWrite struct {
	md   Metadata
	spec bakeapi.Spec
	card bool
	tee  ShardTee
	fill func(w *splitWriter) error
}

// writeSingleSplit is WriteDir with the rows supplied by w.fill. The
// metadata is checked before fill runs and encoded after it, so a merge can
// complete what depends on its inputs, their hardware and their earliest
// creation, as it streams them.
func writeSingleSplit(dir string, w splitWrite) error {
	md, spec := w.md, w.spec
	if err := CheckOutputFree(dir); err != nil {
		return err
	}
	info, err := ParseInfo(md, true)
	if err != nil {
		return err
	}
	if info.MultiSplit {
		return invalidf("WriteDir writes single-split datasets; " +
			"this metadata has 'splits' (use Combine for multi-split datasets)")
	}
	if err := checkWidthDepth(info, spec.Width, spec.Depth, "the rows being written"); err != nil {
		return err
	}
	split := info.Splits[0]
	plan, err := splitPlan(split.Name, spec.Width, spec.Depth, split.NMLPs)
	if err != nil {
		return err
	}
	return writeStaged(dir, func(tmp string) error {
		sw := &splitWriter{
			data:  filepath.Join(tmp, DataDir),
			split: split.Name,
			spec:  spec,
			plan:  plan,
			tee:   w.tee,
		}
		err := w.fill(sw)
		if err == nil {
			err = sw.Close()
		}
		if err != nil {
			sw.abort() // writeStaged removes what it wrote
			return err
		}
		mdBytes, err := encodeMetadata(md)
		if err != nil {
			return err
		}
		if err := staging.WriteNew(filepath.Join(tmp, MetadataFile), mdBytes); err != nil {
			return err
		}
		if !w.card {
			return nil
		}
		final, err := ParseInfo(md, true)
		if err != nil {
			return err
		}
		return staging.WriteNew(filepath.Join(tmp, readmeFile), []byte(renderCard(final)))
	})
}

// splitPlan is the shards of split, of rows rows of width w and depth d, as
// shards.For cuts them, refused as an invalid dataset when it needs too many.
func splitPlan(split string, w, d int, rows int64) (shards.Plan, error) {
	plan, err := shards.For(w, d, rows)
	if err != nil {
		return plan, invalidf("split %q: %v", split, err)
	}
	return plan, nil
}

// checkWidthDepth compares the metadata's width and depth, when present,
// with those of the parquet data; what names where the data came from.
func checkWidthDepth(info *Info, width, depth int, what string) error {
	for _, f := range []struct {
		key          string
		meta, actual int
	}{{"width", info.Width, width}, {"depth", info.Depth, depth}} {
		if f.meta != 0 && f.meta != f.actual {
			return invalidf("metadata %s=%d but %s have %s=%d"+fixMetadataOrRebake,
				f.key, f.meta, what, f.key, f.actual)
		}
	}
	return nil
}

// writeStaged runs fill on a fresh temporary directory beside dir and then
// renames it to dir. Any failure removes the temporary directory, so dir
// either appears complete or not at all.
func writeStaged(dir string, fill func(tmp string) error) (err error) {
	dir = filepath.Clean(dir)
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("dataset: creating parent of output %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return fmt.Errorf("dataset: creating staging directory for %s: %w", dir, err)
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if err := fill(tmp); err != nil {
		return err
	}
	// rename(2) would silently replace an empty directory created meanwhile.
	if err := CheckOutputFree(dir); err != nil {
		return err
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("dataset: moving staged dataset into %s: %w", dir, err)
	}
	return nil
}
