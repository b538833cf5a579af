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
	Info   *Info
	Splits []SplitData // metadata order: the splits object, or the one split
}

// SplitData is one split's parquet files and rows.
type SplitData struct {
	Name  string
	Files []string // paths of the shards, in shard order
	// Width and Depth are the parquet files'; the metadata may leave them out.
	Width, Depth int
	Rows         []Row
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
	md, info, files, err := openDir(dir, allowPartial)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: dir, Meta: md, Info: info}
	claimed := map[string]bool{}
	var names []string
	for i := range info.Splits {
		split := &info.Splits[i]
		names = append(names, split.Name)
		shards, err := splitShards(filepath.Join(dir, dataDir), split.Name, files)
		if err != nil {
			return nil, err
		}
		for _, f := range shards {
			claimed[f] = true
		}
		sd, err := readSplit(dir, info, split, shards, keepRows)
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
			filepath.Join(dir, dataDir), names, stray)
	}
	return d, nil
}

// openDir reads and decodes dir's metadata and lists the parquet files in
// its data/ folder (names only, sorted).
func openDir(dir string, allowPartial bool) (Metadata, *Info, []string, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil, invalidf("dataset directory %s does not exist", dir)
	case err != nil:
		return nil, nil, nil, invalidf("cannot open dataset directory %s: %v", dir, err)
	case !st.IsDir():
		return nil, nil, nil, invalidf("%s is a file, not a directory. Schema 3.0 datasets are directories; pass the directory that holds metadata.json and data/.", dir)
	}
	md, err := ReadMetadata(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	info, err := ParseInfo(md, allowPartial)
	if err != nil {
		return nil, nil, nil, invalidf("%s: %v", filepath.Join(dir, metadataFile), err)
	}
	files, err := parquetFiles(filepath.Join(dir, dataDir))
	if err != nil {
		return nil, nil, nil, err
	}
	return md, info, files, nil
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

// readSplit reads split's shards in order and checks them against info.
func readSplit(dir string, info *Info, split *SplitInfo, shards []string, keepRows bool) (SplitData, error) {
	sd := SplitData{Name: split.Name}
	where := fmt.Sprintf("%s/%s-*.parquet", dataDir, split.Name)
	var nextID int64
	if info.IsPartial {
		nextID = info.MLPRange[0]
	}
	var n int64
	for i, name := range shards {
		path := filepath.Join(dir, dataDir, name)
		sd.Files = append(sd.Files, path)
		w, d, err := scanParquet(path, func(r Row) error {
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
		if i > 0 && (w != sd.Width || d != sd.Depth) {
			return sd, invalidf("%s has width=%d depth=%d but the split's first shard has width=%d depth=%d; all shards must share one shape", path, w, d, sd.Width, sd.Depth)
		}
		sd.Width, sd.Depth = w, d
	}
	if err := checkWidthDepth(info, sd.Width, sd.Depth, where); err != nil {
		return sd, invalidf("%s: %v", filepath.Join(dir, metadataFile), err)
	}
	field := "n_mlps"
	if info.MultiSplit {
		field = fmt.Sprintf("splits[%q].n_mlps", split.Name)
	}
	if split.NMLPs != n {
		return sd, invalidf("%s: metadata %s=%d but %s holds %d rows; fix metadata.json or re-bake", filepath.Join(dir, metadataFile), field, split.NMLPs, where, n)
	}
	return sd, nil
}
