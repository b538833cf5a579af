package dataset

import (
	"path"
	"slices"
	"strings"

	"github.com/whestbake/whestbake/dataset/internal/prepared"
)

// IsDatasetFile reports whether rel, a '/'-separated path relative to a
// dataset directory, is a file of the dataset's own layout: metadata.json,
// the card, a shard in data/, a file of the report, or a file of a split's
// prepared Arrow folder. Publishing sends these only: anything else in the
// directory, such as a token file kept beside the data, hidden files,
// staging folders an interrupted run left or an operator's notes, is not
// the dataset's and must not leave the machine with it.
func IsDatasetFile(rel string) bool {
	if IsShardFile(rel) {
		return true
	}
	if rel != path.Clean(rel) || path.IsAbs(rel) {
		return false
	}
	switch rel {
	case MetadataFile, readmeFile:
		return true
	}
	if slices.Contains(ReportPaths(), rel) {
		return true
	}
	parts := strings.Split(rel, "/")
	return len(parts) == 3 && parts[0] == PreparedDir &&
		checkName("split name", parts[1]) == nil && prepared.IsSplitFile(parts[2])
}

// IsShardFile reports whether rel, a slash-separated path relative to a
// dataset directory, is one of its parquet files, data/<split>-NNNNN-of-NNNNN.parquet,
// which dataset combine-splits copies byte for byte.
func IsShardFile(rel string) bool {
	parts := strings.Split(rel, "/")
	if len(parts) != 2 || parts[0] != DataDir || rel != path.Clean(rel) || path.IsAbs(rel) {
		return false
	}
	split, _, _, ok := parseShardName(parts[1])
	return ok && checkName("split name", split) == nil
}
