package parquetio

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// Expected values are those of whestbench's fixture files
// (testdata/whestbench-fixtures, from
// https://github.com/AIcrowd/whestbench/blob/main/tests/fixtures),
// independently re-baked with numpy.

func float32Bytes(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func sha16(v []float32) string {
	sum := sha256.Sum256(float32Bytes(v))
	return hex.EncodeToString(sum[:8])
}

func equalF32(t *testing.T, what string, got, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d values, want %d", what, len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%s[%d] = %v, want %v", what, i, got[i], want[i])
		}
	}
}

func TestReadSingleSplitFixture(t *testing.T) {
	w, d, rows, err := Read(singleSplitShard)
	if err != nil {
		t.Fatal(err)
	}
	if w != 4 || d != 2 || len(rows) != 4 {
		t.Fatalf("width %d depth %d rows %d", w, d, len(rows))
	}
	want := []struct {
		name       string
		seed       int64
		varBits    uint64
		wSHA, mSHA string
	}{
		{"emily-hart", 1001, 0x3ff132263008c016, "5bb0500a816519e3", "c00eed93961e157f"},
		{"elizabeth-rice", 2002, 0x3fbae6edab200228, "e7fbd67b7925a8c1", "b484d6981bf71929"},
		{"mary-rivera", 3003, 0x3fc81e23b249e54b, "4be0da7b6d78eaef", "91771c2a06116d19"},
		{"ann-andrews", 4004, 0x3febcd88c33fdf2c, "090eab301fe38e7e", "b01fdac30ffde11d"},
	}
	for i, w := range want {
		r := rows[i]
		varBits := math.Float64bits(r.AvgVariance)
		if r.MLPID != int32(i) || r.Name != w.name || r.Seed != w.seed || varBits != w.varBits {
			t.Errorf("row %d = (%d, %s, %d, %x), want (%d, %s, %d, %x)",
				i, r.MLPID, r.Name, r.Seed, varBits, i, w.name, w.seed, w.varBits)
		}
		if got := sha16(r.Weights); got != w.wSHA {
			t.Errorf("row %d weights sha %s want %s", i, got, w.wSHA)
		}
		if got := sha16(r.LayerMeans); got != w.mSHA {
			t.Errorf("row %d all_layer_means sha %s want %s", i, got, w.mSHA)
		}
		equalF32(t, "final_means", r.FinalMeans, r.LayerMeans[4:])
	}
	r := rows[0]
	equalF32(t, "row 0 W0", r.Weights[:16], []float32{
		-0.57080257, 1.2914264, -0.4143602, 0.122757256,
		-0.29390508, -0.81235063, 0.28444058, 0.1638485,
		-0.3771988, -0.020611744, -0.23212835, -1.2098708,
		-1.6906735, 0.7618552, 0.059531882, -0.54841113,
	})
	equalF32(t, "row 0 W1 row 0", r.Weights[16:20],
		[]float32{0.27101275, -0.21611789, 0.066771284, 1.1587745})
	if b := math.Float32bits(r.Weights[0]); b != 0xbf12201e {
		t.Errorf("W0[0][0] bits %#x want 0xbf12201e", b)
	}
	equalF32(t, "row 0 means", r.LayerMeans, []float32{
		0.5987451, 0.8463906, 0.245099, 0.52223223,
		0.35644302, 0.00011175524, 0.005849282, 1.1584041,
	})
	if b := math.Float32bits(r.FinalMeans[1]); b != 0x38ea5e23 {
		t.Errorf("final_means[1] bits %#x want 0x38ea5e23", b)
	}
	bd, err := pyjson.Loads([]byte(r.Breakdown))
	if err != nil {
		t.Fatal(err)
	}
	if used, _ := bd.(*pyjson.Object).GetInt("flops_used"); used != 20884 {
		t.Errorf("breakdown flops_used %d want 20884", used)
	}
}

func TestReadMultiSplitFixtures(t *testing.T) {
	for _, c := range []struct {
		file    string
		width   int
		names   []string
		seeds   []int64
		w0row0  []float32
		means   []float32 // row 0 all_layer_means, or its last layer when short
		avgVar0 float64
	}{
		{
			file:   "multi_split_v3.0/data/public-00000-of-00001.parquet",
			width:  4,
			names:  []string{"luke-martin", "ryan-chavez", "marie-ramos", "matthew-martin"},
			seeds:  []int64{2749604155, 480482724, 2543531098, 1780620601},
			w0row0: []float32{-0.45277357, 0.27773225, -0.2780007, 0.7758902},
			means: []float32{
				0.8931163, 0.5841013, 0.28187528, 0.63678926,
				0.0, 0.6620967, 0.3542428, 0.5804656,
			},
			avgVar0: 0.28817610643990704,
		},
		{
			file:   "multi_split_v3.0/data/holdout-00000-of-00001.parquet",
			width:  4,
			names:  []string{"danielle-barker", "gail-evans", "thomas-schultz", "debra-davis"},
			seeds:  []int64{1311118443, 2895795964, 3039846940, 3051805348},
			w0row0: []float32{-0.76056415, -0.14317934, -0.34588775, 1.311165},
			means: []float32{
				0.54679346, 0.46544954, 0.4763736, 0.48283762,
				0.9337328, 0.098810494, 0.038733795, 1.256707,
			},
			avgVar0: 0.8429806750017985,
		},
		{
			file:  "multi_config_v3.0/data/public-00000-of-00001.parquet",
			width: 8,
			names: []string{"michelle-coleman", "thomas-hoffman"},
			seeds: []int64{42000, 42001},
			w0row0: []float32{
				0.025045294, 0.3357435, 0.32709846, 0.34573942,
				-0.65120816, -0.23413433, 0.54649466, -0.6985912,
			},
			means: []float32{
				0.53142613, 0.40861842, 0.3944181, 0.39293003,
				0.95357823, 0.7508027, 0.59968716, 0.48511332,
				0.29502386, 1.4928069, 1.6131717, 0.07534067,
				0.71118945, 0.8328028, 0.8972149, 1.8509154,
			},
			avgVar0: 1.099747296691382,
		},
		{
			file:  "multi_config_v3.0/data/holdout-00000-of-00001.parquet",
			width: 8,
			names: []string{"shelly-glenn", "stacy-powell"},
			seeds: []int64{99000, 99001},
			w0row0: []float32{
				-0.046055514, -0.4198171, 0.612144, 0.06195848,
				-0.59912574, 0.22632523, 0.6331605, -0.27320492,
			},
			means: []float32{
				0.52916443, 0.03058873, 0.9482387, 0.86044663,
				0.0490334, 0.091539815, 0.21856867, 0.54377306,
			},
			avgVar0: 0.4196682808811202,
		},
	} {
		w, d, rows, err := Read(filepath.Join(fixtures, c.file))
		if err != nil {
			t.Fatal(err)
		}
		if w != c.width || d != 2 || len(rows) != len(c.names) {
			t.Fatalf("%s: width %d depth %d, %d rows", c.file, w, d, len(rows))
		}
		for i, r := range rows {
			if r.MLPID != int32(i) || r.Name != c.names[i] || r.Seed != c.seeds[i] {
				t.Errorf("%s row %d = (%d, %s, %d)", c.file, i, r.MLPID, r.Name, r.Seed)
			}
		}
		equalF32(t, c.file+" W0 row 0", rows[0].Weights[:c.width], c.w0row0)
		if len(c.means) == 2*c.width {
			equalF32(t, c.file+" means", rows[0].LayerMeans, c.means)
		} else {
			equalF32(t, c.file+" final means", rows[0].FinalMeans, c.means)
		}
		if rows[0].AvgVariance != c.avgVar0 {
			t.Errorf("%s avg_variance %v want %v", c.file, rows[0].AvgVariance, c.avgVar0)
		}
	}
}

func openParquetFile(t *testing.T, path string) *parquet.File {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// The writer must produce the logical schema and the huggingface text that
// Arrow and datasets wrote for the fixture of the same shape.
func TestWrittenSchemaMatchesArrowFixture(t *testing.T) {
	fixture := openParquetFile(t, singleSplitShard)
	w, d, rows, err := Read(singleSplitShard)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "x.parquet")
	var buf bytes.Buffer
	if err := Write(&buf, bakeapi.Spec{Width: w, Depth: d}, rows); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	ours := openParquetFile(t, path)
	if got, want := ours.Schema().String(), fixture.Schema().String(); got != want {
		t.Errorf("schema differs from Arrow's:\n got %s\nwant %s", got, want)
	}
	wantHF, _ := fixture.Lookup("huggingface")
	if gotHF, _ := ours.Lookup("huggingface"); gotHF != wantHF {
		t.Errorf("huggingface metadata:\n got %s\nwant %s", gotHF, wantHF)
	}
	if schema.FeaturesJSON(w, d) != wantHF {
		t.Error("schema.FeaturesJSON differs from the datasets-written text")
	}
	if cb := ours.Metadata().CreatedBy; cb != createdBy {
		t.Errorf("created_by %q", cb)
	}
	_, _, back, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if !schematest.RowsEqual(rows[i], back[i]) {
			t.Errorf("row %d does not round-trip", i)
		}
	}
}

func TestWriteIsDeterministicAndBounded(t *testing.T) {
	shape := bakeapi.Spec{Width: 64, Depth: 4}
	rows := schematest.Rows(shape, 0, 70)
	// NaN, infinities and -0 must survive bit-for-bit too.
	rows[3].LayerMeans[0] = float32(math.NaN())
	rows[3].Weights[5] = float32(math.Inf(-1))
	rows[4].AvgVariance = math.Copysign(0, -1)
	var a, b bytes.Buffer
	if err := Write(&a, shape, rows); err != nil {
		t.Fatal(err)
	}
	if err := Write(&b, shape, rows); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("two writes of the same rows differ")
	}
	path := filepath.Join(t.TempDir(), "x.parquet")
	if err := os.WriteFile(path, a.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if groups := len(openParquetFile(t, path).RowGroups()); groups != 2 {
		t.Errorf("70 small rows in %d row groups, want 2 (64 + 6)", groups)
	}
	back := storedRows(t, path)
	for i := range rows {
		if !schematest.RowsEqual(rows[i], back[i]) {
			t.Fatalf("row %d does not round-trip bit-for-bit", i)
		}
	}
	// What the codec keeps, a dataset reader refuses.
	_, _, _, err := Read(path)
	if err == nil || !strings.Contains(err.Error(), "row 3: row mlp_id=3: weights[5] is -Inf") {
		t.Errorf("ReadParquet of a row with an infinity: %v", err)
	}
}

// storedRows reads path through the codec alone, which returns the values
// as stored, NaN bits included; the dataset readers refuse such rows.
func storedRows(t *testing.T, path string) []schema.Row {
	t.Helper()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var rows []schema.Row
	for {
		row, err := r.Next()
		if errors.Is(err, io.EOF) {
			return rows
		}
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row.Clone())
	}
}

func TestRowsPerGroup(t *testing.T) {
	for _, c := range []struct {
		s    bakeapi.Spec
		want int64
	}{
		{bakeapi.Spec{Width: 4, Depth: 2}, 64},
		{bakeapi.Spec{Width: 256, Depth: 8}, 31},
		{bakeapi.Spec{Width: 1024, Depth: 16}, 1},
		{bakeapi.Spec{Width: 4096, Depth: 64}, 1},
	} {
		if got := rowsPerGroup(c.s.Width, c.s.Depth); got != c.want {
			t.Errorf("rowsPerGroup(%+v) = %d want %d", c.s, got, c.want)
		}
	}
}

func TestWriteRejectsWrongLengths(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	rows := schematest.Rows(shape, 0, 1)
	rows[0].FinalMeans = rows[0].FinalMeans[:3]
	if err := Write(new(bytes.Buffer), shape, rows); err == nil {
		t.Error("short final_means accepted")
	}
	if err := Write(new(bytes.Buffer), bakeapi.Spec{Width: 0, Depth: 2}, nil); err == nil {
		t.Error("zero width accepted")
	}
}

func TestReadRejectsDamagedFiles(t *testing.T) {
	shape := bakeapi.Spec{Width: 8, Depth: 2}
	rows := schematest.Rows(shape, 0, 3)
	var buf bytes.Buffer
	if err := Write(&buf, shape, rows); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	dir := t.TempDir()
	// One bit of an uncompressed weight: only the page CRC can notice it.
	at := bytes.Index(good, float32Bytes(rows[1].Weights[10:13]))
	if at < 0 {
		t.Fatal("weights not found in the file")
	}
	flipped := append([]byte(nil), good...)
	flipped[at+1] ^= 0x40
	for name, data := range map[string][]byte{
		"truncated.parquet": good[:len(good)-100],
		"flipped.parquet":   flipped,
		"garbage.parquet":   []byte("not a parquet file at all"),
		"empty.parquet":     nil,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, _, _, err := Read(path)
		schematest.WantErr[*schema.InvalidDatasetError](t, err, path)
	}
	_, _, _, err := Read(filepath.Join(dir, "missing.parquet"))
	schematest.WantErr[*schema.InvalidDatasetError](t, err, "missing.parquet")
}

func TestReadRejectsForeignLayouts(t *testing.T) {
	dir := t.TempDir()
	// Right columns but no huggingface key: the shape is unknown.
	type plain struct {
		MLPID int32 `parquet:"mlp_id"`
	}
	path := filepath.Join(dir, "plain.parquet")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := parquet.NewGenericWriter[plain](f)
	if _, err := w.Write([]plain{{1}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, _, _, err = Read(path)
	schematest.WantErr[*schema.InvalidDatasetError](t, err, path, "columns")
}

func TestShapeFromFeatures(t *testing.T) {
	w, d, err := schema.ShapeFromFeatures(schema.FeaturesJSON(16, 3))
	if err != nil || w != 16 || d != 3 {
		t.Errorf("round trip: width %d depth %d %v", w, d, err)
	}
	for _, bad := range []string{
		`not json`,
		`{"info": {}}`,
		`{"info": {"features": {"weights": {"shape": [2, 4, 4]}, ` +
			`"all_layer_means": {"shape": [2, 4]}, "final_means": {"length": 5}}}}`,
		`{"info": {"features": {"weights": {"shape": [2, 4, 5]}, ` +
			`"all_layer_means": {"shape": [2, 4]}, "final_means": {"length": 4}}}}`,
		`{"info": {"features": {"weights": {"shape": [2, 4]}, ` +
			`"all_layer_means": {"shape": [2, 4]}, "final_means": {"length": 4}}}}`,
	} {
		if _, _, err := schema.ShapeFromFeatures(bad); err == nil {
			t.Errorf("accepted %s", bad)
		}
	}
}

// A file whose lists nest differently from its declared shape (here 4
// layers of 2×4 weights instead of 2 of 4×4, the same number of floats)
// must be rejected, not silently reshaped.
func TestReadRejectsWrongNesting(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	var buf bytes.Buffer
	pw, err := NewWriter(&buf, shape)
	if err != nil {
		t.Fatal(err)
	}
	pw.lists[schema.ColWeights].strides = []int{8, 4, 1}
	if err := pw.Write(schematest.Rows(shape, 0, 2)...); err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "nested.parquet")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, _, err = Read(path)
	schematest.WantErr[*schema.InvalidDatasetError](t, err, path, "weights", "repetition level")
}
