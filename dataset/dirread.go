package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Dir is a dataset directory read back by ReadDir.
type Dir struct {
	Path   string
	Meta   Metadata
	Splits []SplitData // metadata order: the splits object, or the one split
}

// SplitData is one split's parquet files and rows.
type SplitData struct {
	Name  string
	Files []string // paths of the shards, in shard order
	Shape Shape
	Rows  []Row
}

// ReadDir reads a dataset directory: it validates metadata.json (refusing a
// partial unless allowPartial), finds each split's shards by exact file
// name, reads every row, and checks that the parquet data agrees with the
// metadata (n_mlps, width, depth, consecutive mlp_id values). Every failure
// is an *InvalidDatasetError.
func ReadDir(dir string, allowPartial bool) (*Dir, error) {
	return readDir(dir, allowPartial, true)
}

// readDir is ReadDir that can leave the rows out (keepRows false) when only
// the checks matter, so verifying a large dataset holds one row at a time.
func readDir(dir string, allowPartial, keepRows bool) (*Dir, error) {
	md, files, err := openDir(dir, allowPartial)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: dir, Meta: md}
	claimed := map[string]bool{}
	for _, split := range splitNames(md) {
		shards, err := splitShards(filepath.Join(dir, dataDir), split, files)
		if err != nil {
			return nil, err
		}
		for _, f := range shards {
			claimed[f] = true
		}
		sd, err := readSplit(dir, md, split, shards, keepRows)
		if err != nil {
			return nil, err
		}
		d.Splits = append(d.Splits, sd)
	}
	var stray []string
	for _, f := range files {
		if !claimed[f] {
			stray = append(stray, f)
		}
	}
	if len(stray) > 0 {
		return nil, invalidf("%s has parquet files that belong to no split named in metadata.json (%q): %q; remove them or fix the metadata",
			filepath.Join(dir, dataDir), splitNames(md), stray)
	}
	return d, nil
}

// openDir reads and validates dir's metadata and lists the parquet files in
// its data/ folder (names only, sorted).
func openDir(dir string, allowPartial bool) (Metadata, []string, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, invalidf("dataset directory %s does not exist", dir)
	case err != nil:
		return nil, nil, invalidf("cannot open dataset directory %s: %v", dir, err)
	case !st.IsDir():
		return nil, nil, invalidf("%s is a file, not a directory. Schema 3.0 datasets are directories; pass the directory that holds metadata.json and data/.", dir)
	}
	md, err := ReadMetadata(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := Validate(md, allowPartial); err != nil {
		return nil, nil, invalidf("%s: %v", filepath.Join(dir, metadataFile), err)
	}
	files, err := parquetFiles(filepath.Join(dir, dataDir))
	if err != nil {
		return nil, nil, err
	}
	return md, files, nil
}

func parquetFiles(data string) ([]string, error) {
	entries, err := os.ReadDir(data)
	if err != nil {
		return nil, invalidf("cannot list %s: %v; a dataset keeps its parquet files there", data, err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".parquet") {
			files = append(files, e.Name())
		}
	}
	sort.Strings(files)
	return files, nil
}

// splitNames lists the splits md declares: the keys of "splits", or the
// single "split" (default "public").
func splitNames(md Metadata) []string {
	if splits, ok := md.GetObject("splits"); ok {
		return splits.Keys()
	}
	if s, ok := md.GetString("split"); ok {
		return []string{s}
	}
	return []string{DefaultSplit}
}

// splitInfo returns the metadata object that holds split's n_mlps: the
// split's entry of a multi-split dataset, else md itself.
func splitInfo(md Metadata, split string) *Object {
	if splits, ok := md.GetObject("splits"); ok {
		info, _ := splits.GetObject(split)
		return info
	}
	return md
}

// firstMLPID is the mlp_id the first row must carry: mlp_range[0] for a
// partial, 0 otherwise.
func firstMLPID(md Metadata) (int64, error) {
	if !md.Truthy("is_partial") {
		return 0, nil
	}
	start, _, err := mlpRange(md)
	return start, err
}

func mlpRange(md Metadata) (int64, int64, error) {
	raw, _ := md.Get("mlp_range")
	r, ok := raw.([]any)
	if ok && len(r) == 2 {
		start, ok1 := asInt(r[0])
		end, ok2 := asInt(r[1])
		if ok1 && ok2 && start >= 0 && start < end {
			return start, end, nil
		}
	}
	return 0, 0, invalidf("mlp_range=%s is not a [start, end] pair of integers with 0 <= start < end; a partial must record the MLPs it holds", compactJSON(raw))
}

// readSplit reads split's shards in order and checks them against md.
func readSplit(dir string, md Metadata, split string, shards []string, keepRows bool) (SplitData, error) {
	sd := SplitData{Name: split}
	where := fmt.Sprintf("%s/%s-*.parquet", dataDir, split)
	nextID, err := firstMLPID(md)
	if err != nil {
		return sd, invalidf("%s: %v", filepath.Join(dir, metadataFile), err)
	}
	var n int64
	for i, name := range shards {
		path := filepath.Join(dir, dataDir, name)
		sd.Files = append(sd.Files, path)
		shape, err := scanParquet(path, func(r Row) error {
			if int64(r.MLPID) != nextID {
				return invalidf("%s row %d has mlp_id=%d, expected %d: rows must hold consecutive MLP indices", path, n, r.MLPID, nextID)
			}
			nextID++
			n++
			if keepRows {
				sd.Rows = append(sd.Rows, r)
			}
			return nil
		})
		if err != nil {
			return sd, err
		}
		if i > 0 && shape != sd.Shape {
			return sd, invalidf("%s has width=%d depth=%d but the split's first shard has width=%d depth=%d; all shards must share one shape", path, shape.Width, shape.Depth, sd.Shape.Width, sd.Shape.Depth)
		}
		sd.Shape = shape
	}
	if err := checkShapeFields(md, sd.Shape, where); err != nil {
		return sd, invalidf("%s: %v", filepath.Join(dir, metadataFile), err)
	}
	field := "n_mlps"
	if md.Has("splits") {
		field = fmt.Sprintf("splits[%q].n_mlps", split)
	}
	if v, _ := splitInfo(md, split).Get("n_mlps"); !intIs(v, n) {
		return sd, invalidf("%s: metadata %s=%s but %s holds %d rows; fix metadata.json or re-bake", filepath.Join(dir, metadataFile), field, compactJSON(v), where, n)
	}
	return sd, nil
}
