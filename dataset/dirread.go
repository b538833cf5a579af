package dataset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/whestbake/whestbake/dataset/internal/parquetio"
)

// Dir is a dataset directory: its metadata and each split's shards, as
// Open finds them, and its rows once read by ReadDir or streamed by Scan.
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
	NMLPs        int64 // rows read by the last Scan; the metadata's n_mlps agrees
	Rows         []Row // ReadDir's; Scan keeps none
}

// ReadDir reads a dataset directory: Open and a Scan that keeps every row.
// It holds the whole dataset in memory: use Open and Scan for datasets of
// unknown size.
func ReadDir(dir string, allowPartial bool) (*Dir, error) {
	d, err := Open(dir, allowPartial)
	if err != nil {
		return nil, err
	}
	err = d.Scan(func(s *SplitData, r Row) error {
		s.Rows = append(s.Rows, r.Clone())
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// Open reads a dataset directory without reading its rows: it validates
// metadata.json, refusing a partial unless allowPartial, finds each split's
// shards by exact file name, and checks every shard's footer: its columns
// and its shape, which the split's shards share and the metadata's width
// and depth agree with. Scan then checks the rows. Every failure is an
// *InvalidDatasetError.
func Open(dir string, allowPartial bool) (*Dir, error) {
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
		sd, _, err := openShards(dir, split.Name, files)
		if err != nil {
			return nil, err
		}
		for _, f := range sd.Files {
			claimed[filepath.Base(f)] = true
		}
		pattern := fmt.Sprintf("%s/%s-*.parquet", DataDir, split.Name)
		if err := checkWidthDepth(info, sd.Width, sd.Depth, pattern); err != nil {
			return nil, invalidf("%s: %v", filepath.Join(dir, MetadataFile), err)
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
		return nil, invalidf("%s has parquet files that belong to no split named in metadata.json "+
			"(%q): %q; remove them or fix the metadata",
			filepath.Join(dir, DataDir), names, stray)
	}
	return d, nil
}

// openShards picks split's shards out of files, the parquet files in
// dir's data/, one complete, ordered set as splitShards finds it, and checks every
// shard's footer: the split's shards share one shape. It returns the
// split's files and shape, and the rows its footers count.
func openShards(dir, split string, files []string) (SplitData, int64, error) {
	sd := SplitData{Name: split}
	names, err := splitShards(filepath.Join(dir, DataDir), split, files)
	if err != nil {
		return sd, 0, err
	}
	var rows int64
	for j, name := range names {
		path := filepath.Join(dir, DataDir, name)
		sd.Files = append(sd.Files, path)
		r, err := OpenParquet(path)
		if err != nil {
			return sd, 0, err
		}
		w, dp, n := r.Width(), r.Depth(), r.NumRows()
		r.Close()
		if j > 0 && (w != sd.Width || dp != sd.Depth) {
			return sd, 0, invalidf("%s has width=%d depth=%d "+
				"but the split's first shard has width=%d depth=%d; "+
				"all shards must share one shape", path, w, dp, sd.Width, sd.Depth)
		}
		sd.Width, sd.Depth = w, dp
		rows += n
	}
	return sd, rows, nil
}

// Scan reads every row of every split in order, checks it and hands it to
// visit with its split. A row must be a valid row of the split's shape, the
// mlp_id values consecutive from the partial's range start or 0, the row
// count that of n_mlps. Scan holds one row at a time however large the
// dataset: the row's
// arrays are reused for the next row once visit returns, so visit copies
// what it keeps. visit may be nil when only the checks matter; an error
// from visit stops the scan and is returned as it is. A split's row count is
// checked after its rows were visited, so act on what visit saw only once
// Scan returns nil.
func (d *Dir) Scan(visit func(*SplitData, Row) error) error {
	var row Row // shared by every file
	for i := range d.Splits {
		if err := d.scanSplit(&d.Splits[i], &d.Info.Splits[i], &row, visit); err != nil {
			return err
		}
	}
	return nil
}

func (d *Dir) scanSplit(
	sd *SplitData,
	split *SplitInfo,
	row *Row,
	visit func(*SplitData, Row) error,
) error {
	var nextID int64
	if d.Info.IsPartial {
		nextID = d.Info.MLPRange[0]
	}
	sd.NMLPs = 0
	for _, path := range sd.Files {
		_, _, err := parquetio.Scan(path, row, func(r Row) error {
			if int64(r.MLPID) != nextID {
				return invalidf("%s row %d has mlp_id=%d, expected %d: "+
					"rows must hold consecutive MLP indices", path, sd.NMLPs, r.MLPID, nextID)
			}
			nextID++
			sd.NMLPs++
			if visit == nil {
				return nil
			}
			return visit(sd, r)
		})
		if err != nil {
			return err
		}
	}
	field := "n_mlps"
	if d.Info.MultiSplit {
		field = fmt.Sprintf("splits[%q].n_mlps", split.Name)
	}
	if split.NMLPs != sd.NMLPs {
		return invalidf("%s: metadata %s=%d but %s/%s-*.parquet holds %d rows"+fixMetadataOrRebake,
			filepath.Join(d.Path, MetadataFile), field, split.NMLPs, DataDir, split.Name, sd.NMLPs)
	}
	return nil
}

// openDir reads and decodes dir's metadata and lists the parquet files in
// its data/ folder, names only, sorted.
func openDir(dir string, allowPartial bool) (Metadata, *Info, []string, error) {
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil, invalidf("dataset directory %s does not exist", dir)
	case err != nil:
		return nil, nil, nil, invalidf("cannot open dataset directory %s: %v", dir, err)
	case !st.IsDir():
		return nil, nil, nil, invalidf("%s is a file, not a directory. "+
			"Schema 3.0 datasets are directories; "+
			"pass the directory that holds metadata.json and data/.", dir)
	}
	md, err := ReadMetadata(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	info, err := ParseInfo(md, allowPartial)
	if err != nil {
		return nil, nil, nil, invalidf("%s: %v", filepath.Join(dir, MetadataFile), err)
	}
	files, err := parquetFiles(filepath.Join(dir, DataDir))
	if err != nil {
		return nil, nil, nil, err
	}
	return md, info, files, nil
}

func parquetFiles(data string) ([]string, error) {
	entries, err := os.ReadDir(data)
	if err != nil {
		return nil, invalidf("cannot list %s: %v; a dataset keeps its parquet files there",
			data, err)
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
