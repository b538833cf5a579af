package seeds

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

const fixtureDir = "../../testdata/whestbench-fixtures"

// TestFixtureWeightsFromReference checks values of whestbench's fixture files
// (https://github.com/AIcrowd/whestbench/blob/main/tests/fixtures, copied to
// testdata/whestbench-fixtures).
func TestFixtureWeightsFromReference(t *testing.T) {
	w, err := Weights(4, 2, DeriveV3(1001).Weight)
	if err != nil {
		t.Fatal(err)
	}
	layer0 := []float32{
		-0.57080257, 1.2914264, -0.4143602, 0.122757256,
		-0.29390508, -0.81235063, 0.28444058, 0.1638485,
		-0.3771988, -0.020611744, -0.23212835, -1.2098708,
		-1.6906735, 0.7618552, 0.059531882, -0.54841113,
	}
	equalBits(t, "seed 1001 layer 0", w[:16], layer0)
	layer1row0 := []float32{0.27101275, -0.21611789, 0.066771284, 1.1587745}
	equalBits(t, "seed 1001 layer 1 row 0", w[16:20], layer1row0)
	// The document's "first word bits 0xbf12201e" is the row's first weight,
	// W[0][0][0] (it sits next to layer 1 in the text, but 0.27101275 is 0x3e8ac22f).
	if b := math.Float32bits(w[0]); b != 0xbf12201e {
		t.Errorf("seed 1001 first weight bits %08x, want bf12201e", b)
	}

	// SHA-256 prefixes of each row's float32 little-endian weight bytes.
	for seed, prefix := range map[uint64]string{
		1001: "5bb0500a816519e3",
		2002: "e7fbd67b7925a8c1",
		3003: "4be0da7b6d78eaef",
		4004: "090eab301fe38e7e",
	} {
		w, err := Weights(4, 2, DeriveV3(seed).Weight)
		if err != nil {
			t.Fatal(err)
		}
		if got := sha256F32(w); !strings.HasPrefix(got, prefix) {
			t.Errorf("seed %d: weights sha256 %s, reference prefix %s", seed, got, prefix)
		}
	}

	for _, c := range []struct {
		name   string
		weight SeedSequence
		width  int
		w0row0 []float32
	}{
		{
			name:   "multi_split public row 0",
			weight: DeriveV2(1, 0).Weight,
			width:  4,
			w0row0: []float32{-0.45277357, 0.27773225, -0.2780007, 0.7758902},
		},
		{
			name:   "multi_split holdout row 0",
			weight: DeriveV2(2, 0).Weight,
			width:  4,
			w0row0: []float32{-0.76056415, -0.14317934, -0.34588775, 1.311165},
		},
		{
			name:   "multi_config public 42000",
			weight: DeriveV3(42000).Weight,
			width:  8,
			w0row0: []float32{
				0.025045294, 0.3357435, 0.32709846, 0.34573942,
				-0.65120816, -0.23413433, 0.54649466, -0.6985912,
			},
		},
		{
			name:   "multi_config holdout 99000",
			weight: DeriveV3(99000).Weight,
			width:  8,
			w0row0: []float32{
				-0.046055514, -0.4198171, 0.612144, 0.06195848,
				-0.59912574, 0.22632523, 0.6331605, -0.27320492,
			},
		},
	} {
		w, err := Weights(c.width, 2, c.weight)
		if err != nil {
			t.Fatal(err)
		}
		equalBits(t, c.name, w[:c.width], c.w0row0)
	}
}

type fixtureRow struct {
	MLPID   int32         `parquet:"mlp_id,optional"`
	MLPSeed int64         `parquet:"mlp_seed,optional"`
	Weights [][][]float32 `parquet:"weights,optional,list"`
}

// TestFixtureParquetWeights re-derives every row of the three whestbench
// fixtures (16 rows, protocols 3.0 and 2.0) and compares all weight bits.
func TestFixtureParquetWeights(t *testing.T) {
	for _, c := range []struct {
		file   string
		v2Root *uint64 // protocol 2.0: mlp_seed holds the estimator seed
	}{
		{"single_split_v3_protocol/data/public-00000-of-00001.parquet", nil},
		{"multi_config_v3.0/data/public-00000-of-00001.parquet", nil},
		{"multi_config_v3.0/data/holdout-00000-of-00001.parquet", nil},
		{"multi_split_v3.0/data/public-00000-of-00001.parquet", ptr(1)},
		{"multi_split_v3.0/data/holdout-00000-of-00001.parquet", ptr(2)},
	} {
		rows, err := parquet.ReadFile[fixtureRow](filepath.Join(fixtureDir, c.file))
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if len(rows) == 0 {
			t.Fatalf("%s: no rows", c.file)
		}
		for _, r := range rows {
			depth, width := len(r.Weights), len(r.Weights[0])
			var ws SeedSequence
			if c.v2Root != nil {
				s := DeriveV2(*c.v2Root, int(r.MLPID))
				if int64(s.EstimatorSeed) != r.MLPSeed {
					t.Errorf("%s row %d: mlp_seed %d, derived estimator seed %d",
						c.file, r.MLPID, r.MLPSeed, s.EstimatorSeed)
				}
				ws = s.Weight
			} else {
				ws = DeriveV3(uint64(r.MLPSeed)).Weight
			}
			got, err := Weights(width, depth, ws)
			if err != nil {
				t.Fatal(err)
			}
			var want []float32
			for _, m := range r.Weights {
				for _, row := range m {
					want = append(want, row...)
				}
			}
			equalBits(t, fmt.Sprintf("%s row %d", c.file, r.MLPID), got, want)
		}
	}
}

func ptr(v uint64) *uint64 { return &v }

func equalBits(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s: #%d = %v (%08x), want %v (%08x)", what, i,
				got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
}
