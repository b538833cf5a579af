// Package prepared writes and checks the prepared Arrow tree of a
// multi-split dataset, whestbench's loader fast path: for each split,
// prepared/<split>/ in the layout of the datasets library's
// Dataset.save_to_disk, which whestbench's loader opens with
// datasets.load_from_disk in preference to the parquet files, falling back
// to them silently when it cannot. A split's folder holds its rows as an
// Arrow IPC stream of one record batch a row, so its writer holds one row,
// and the same rows always give the same bytes. Its checker, SplitCheck,
// reads any folder save_to_disk writes, in a row's memory too.
package prepared

import (
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/internal/shards"
)

const (
	// Dir is the tree's folder in a dataset directory.
	Dir = "prepared"
	// Format is the prepared_splits entries' format.
	Format = "save_to_disk"
	// ArrowFile is the one shard of a split that fits in one by package
	// shards, whose bound is save_to_disk's max_shard_size of 500 MB. It is
	// what whestbench's prepared tree holds for a small split too; larger
	// splits have data-NNNNN-of-MMMMM.arrow, and load_from_disk reads
	// whatever state.json lists.
	ArrowFile = "data-00000-of-00001.arrow"
	// InfoFile is the split's DatasetInfo: its features.
	InfoFile = "dataset_info.json"
	// StateFile is save_to_disk's state: the shards, the split's name.
	StateFile = "state.json"
)

// Files are the files prepare-arrow writes in s's folder: its Arrow
// shards, in order, and its two JSON files.
func (s Split) Files() ([]string, error) {
	plan, err := s.plan()
	if err != nil {
		return nil, err
	}
	files := newShardStream(plan, s.Width, s.Depth, nil, nil).names()
	return append(files, InfoFile, StateFile), nil
}

// plan is s's shards as shards.For cuts them, a plan that needs too many refused as
// an invalid dataset.
func (s Split) plan() (shards.Plan, error) {
	plan, err := shards.For(s.Width, s.Depth, s.Rows)
	if err != nil {
		return plan, schema.Errorf("split %q: %v", s.Name, err)
	}
	return plan, nil
}

// Paths are the files of a dataset directory's prepared tree for splits,
// '/'-separated and relative to the dataset directory.
func Paths(splits []Split) ([]string, error) {
	var out []string
	for _, s := range splits {
		files, err := s.Files()
		if err != nil {
			return nil, err
		}
		for _, f := range files {
			out = append(out, Dir+"/"+s.Name+"/"+f)
		}
	}
	return out, nil
}

// IsSplitFile reports whether name is a file save_to_disk writes in a
// split's folder: its two JSON files, or a shard that IsShardName takes.
func IsSplitFile(name string) bool {
	return name == InfoFile || name == StateFile || IsShardName(name)
}

// SplitsBlock is the metadata's prepared_splits block for splits names,
// as whestbench writes it.
func SplitsBlock(names []string) *pyjson.Object {
	block := pyjson.NewObject()
	for _, n := range names {
		block.Set(n, pyjson.NewObject().Set("path", Dir+"/"+n).Set("format", Format))
	}
	return block
}
