// Package prepared writes and checks the prepared Arrow tree of a
// multi-split dataset (whestbench's loader fast path): for each split,
// prepared/<split>/ in the layout of the datasets library's
// Dataset.save_to_disk, which whestbench's loader opens with
// datasets.load_from_disk in preference to the parquet files, falling back
// to them silently when it cannot. A split's folder holds its rows as an
// Arrow IPC stream of one record batch a row, so its writer holds one row,
// and the same rows always give the same bytes. Its checker (SplitCheck)
// reads any folder save_to_disk writes, in a row's memory too.
package prepared

import (
	"strings"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

const (
	// Dir is the tree's folder in a dataset directory.
	Dir = "prepared"
	// Format is the prepared_splits entries' format.
	Format = "save_to_disk"
	// ArrowFile is the one shard save_to_disk writes for a dataset under its
	// max_shard_size (500 MB); one file a split is what whestbench's
	// prepared tree holds too, and load_from_disk reads whatever state.json
	// lists.
	ArrowFile = "data-00000-of-00001.arrow"
	// InfoFile is the split's DatasetInfo: its features.
	InfoFile = "dataset_info.json"
	// StateFile is save_to_disk's state: the shards, the split's name.
	StateFile = "state.json"
)

// splitFiles are the files prepare-arrow writes in a split's folder.
var splitFiles = []string{ArrowFile, InfoFile, StateFile}

// Paths are the files of a dataset directory's prepared tree for the splits
// names, '/'-separated and relative to the dataset directory.
func Paths(names []string) []string {
	var out []string
	for _, n := range names {
		for _, f := range splitFiles {
			out = append(out, Dir+"/"+n+"/"+f)
		}
	}
	return out
}

// IsSplitFile reports whether name is a file save_to_disk writes in a
// split's folder: its two JSON files, or a data-NNNNN-of-NNNNN.arrow shard.
func IsSplitFile(name string) bool {
	return name == InfoFile || name == StateFile ||
		strings.HasPrefix(name, "data-") && strings.HasSuffix(name, ".arrow")
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
