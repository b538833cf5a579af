package pyjudge

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/whestbake/whestbake/internal/shards"
)

// datasets' Dataset.shard(num_shards, index, contiguous=True), which
// save_to_disk and push_to_hub cut with, gives each shard the rows the
// shard plan gives it, for splits that divide evenly and splits that do
// not, down to shards of one row.
func TestShardPlanIsDatasetsShard(t *testing.T) {
	env := Need(t)
	cases := [][2]int{{1, 1}, {7, 3}, {10, 3}, {12, 4}, {13, 4}, {100, 54}, {5, 5}}
	arg, _ := json.Marshal(cases)
	out := env.PythonOK(t, Cmd{}, `
import json, sys
from datasets import Dataset
print(json.dumps([[list(Dataset.from_dict({"i": list(range(n))}).shard(m, k, contiguous=True)["i"])
    for k in range(m)] for n, m in json.loads(sys.argv[1])]))
`, string(arg)).Stdout
	var want [][][]int64
	if err := json.Unmarshal([]byte(out), &want); err != nil {
		t.Fatalf("datasets printed %q: %v", out, err)
	}
	for c, nm := range cases {
		p := shards.Plan{Rows: int64(nm[0]), Count: nm[1]}
		for k := range nm[1] {
			var got []int64
			for i := p.Start(k); i < p.Start(k)+p.Len(k); i++ {
				got = append(got, i)
			}
			if !slices.Equal(got, want[c][k]) {
				t.Errorf("%d rows in %d shards, shard %d: rows %v, datasets' %v",
					nm[0], nm[1], k, got, want[c][k])
			}
		}
	}
}
