package dataset

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"

	"github.com/whestbake/whestbake/bakeapi"
)

// checkName applies whestbench's rule for the split and config names of a
// dataset it reads, bakeapi.CheckWhestbenchName: a dataset whose names
// Hugging Face datasets cannot load still opens, so that it can be
// inspected, verified and compared. bakeapi's message names no field, so
// kind, "split name" or "config name", says which name it refuses.
func checkName(kind, name string) error {
	if err := bakeapi.CheckWhestbenchName(name); err != nil {
		return fmt.Errorf("%s %w", kind, err)
	}
	return nil
}

// Data file names: data/<split>-NNNNN-of-MMMMM.parquet. HF discovers custom
// splits of a local directory only through this exact pattern. The split
// name is matched whole, where whestbench splits the file name at the first
// '-', which turns my-custom-split into "my".
var shardRE = regexp.MustCompile(`^(.+)-([0-9]{5})-of-([0-9]{5})\.parquet$`)

// shardName is the file name of shard index of count for split.
func shardName(split string, index, count int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.parquet", split, index, count)
}

// parseShardName splits a data file name into split, index and count.
func parseShardName(file string) (split string, index, count int, ok bool) {
	m := shardRE.FindStringSubmatch(file)
	if m == nil {
		return "", 0, 0, false
	}
	index, _ = strconv.Atoi(m[2])
	count, _ = strconv.Atoi(m[3])
	return m[1], index, count, true
}

// splitShards picks split's shards out of the file names in data/ and
// checks they form one complete set 00000..M-1 of M. The returned names are
// in shard order.
func splitShards(data, split string, files []string) ([]string, error) {
	byIndex := map[int]string{}
	count := -1
	for _, f := range files {
		s, i, m, ok := parseShardName(f)
		if !ok || s != split {
			continue
		}
		if count >= 0 && m != count {
			return nil, invalidf("split %q in %s mixes shard counts "+
				"(%s says of %05d, another file says of %05d); keep one complete set of shards",
				split, data, f, m, count)
		}
		count = m
		byIndex[i] = f
	}
	if count < 0 {
		return nil, invalidf("split %q has no parquet file in %s (expected %s)",
			split, data, shardName(split, 0, 1))
	}
	names := make([]string, 0, count)
	for i := range count {
		f, ok := byIndex[i]
		if !ok {
			return nil, invalidf("split %q in %s is missing shard %s",
				split, data, shardName(split, i, count))
		}
		names = append(names, f)
	}
	if len(byIndex) != count {
		extra := []string{}
		for i, f := range byIndex {
			if i >= count {
				extra = append(extra, f)
			}
		}
		sort.Strings(extra)
		return nil, invalidf("split %q in %s has shards beyond its count: %v",
			split, data, extra)
	}
	return names, nil
}
