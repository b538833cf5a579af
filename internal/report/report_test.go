package report

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/internal/datasettest"
)

// split writes a complete single-split dataset of rows under parent/name.
// Only LayerMeans and AvgVariance of the rows matter here: the rest is
// filled in to make them valid rows of the shape.
func split(
	t *testing.T,
	parent, name string,
	w, d int,
	layerMeans [][]float32,
	avgVar []float64,
	created time.Time,
) string {
	t.Helper()
	rows := make([]dataset.Row, len(layerMeans))
	for i, lm := range layerMeans {
		rows[i] = dataset.Row{
			MLPID:       int32(i),
			Name:        name + "-" + string(rune('a'+i)),
			Seed:        int64(100 + i),
			Weights:     make([]float32, d*w*w),
			LayerMeans:  lm,
			FinalMeans:  lm[(d-1)*w:],
			AvgVariance: avgVar[i],
			Breakdown:   dataset.Breakdown(w, d, 100, 1024, 0),
		}
	}
	config := ""
	if name != dataset.DefaultSplit {
		config = name
	}
	md := dataset.NewBakeMetadata(dataset.BakeInfo{
		CreatedAt:        created,
		Split:            name,
		Config:           config,
		TotalMLPs:        len(rows),
		NSamples:         100,
		Width:            w,
		Depth:            d,
		WhestbakeVersion: "test",
		Sampler:          "philox",
		Engine:           "cpu",
		AlgorithmVersion: "philox-1",
		Device:           "cpu",
		ChunkSize:        1024,
		SeedFileSHA256:   strings.Repeat("0", 64),
	})
	dir := filepath.Join(parent, name)
	if err := dataset.WriteDir(dir, md, bakeapi.Spec{Width: w, Depth: d}, rows); err != nil {
		t.Fatal(err)
	}
	return dir
}

// handmade is a dataset of 3 MLPs of width 2 and depth 2 whose statistics
// are worked out by hand in TestStatisticsOfAHandmadeDataset.
func handmade(t *testing.T, parent string) string {
	return split(t, parent, "public", 2, 2, [][]float32{
		{0, 1, 2, 0},
		{0, 0, 1, 1},
		{1, 1, 0, 3},
	}, []float64{0.5, 0.25, 1.5}, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
}

func statsOf(t *testing.T, dir string) *Stats {
	t.Helper()
	d, err := dataset.Open(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	st, err := compute(d, nil)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-12*max(1, math.Abs(b)) }

func TestStatisticsOfAHandmadeDataset(t *testing.T) {
	s := statsOf(t, handmade(t, t.TempDir())).Splits[0]
	// Layer 1 holds 0 1 | 0 0 | 1 1: mean 3/6, E[x²] 3/6, variance 1/2 − 1/4;
	// three zeros of six neurons are dead.
	// Layer 2 holds 2 0 | 1 1 | 0 3: mean 7/6, E[x²] 15/6, variance
	// 15/6 − 49/36 = 41/36; two of six are dead.
	want := []struct{ mean, variance, dead float64 }{
		{0.5, 0.25, 0.5},
		{7.0 / 6, 41.0 / 36, 1.0 / 3},
	}
	for l, w := range want {
		got := s.Layers[l]
		if !near(got.Mean, w.mean) ||
			!near(got.Variance(), w.variance) ||
			got.DeadFraction() != w.dead {
			t.Errorf("layer %d: mean %g variance %g dead %g, want %g %g %g", l+1,
				got.Mean, got.Variance(), got.DeadFraction(), w.mean, w.variance, w.dead)
		}
	}
	// Final means are layer 2: at width 1/2 on 4 bins, [0,½) holds the two
	// zeros, [1,1½) the two ones, [2,2½) the 2, [3,3½) the 3; 7 bins at most
	// gives width 1/2 from 0 (3·2 = 6 + 1 bins).
	g, counts, _ := display([]*histogram{&s.FinalMeans}, 7, 1)
	if g.width != 0.5 || g.first != 0 || !slices.Equal(counts[0], []int64{2, 0, 2, 0, 1, 0, 1}) {
		t.Errorf("final means histogram %+v %v, want width 0.5 from 0: [2 0 2 0 1 0 1]",
			g, counts[0])
	}
	v := &s.AvgVariance
	if v.finite != 3 || v.min != 0.25 || v.max != 1.5 || !near(v.mean(), 0.75) {
		t.Errorf("avg_variance: n %d min %g max %g mean %g, want 3, 0.25, 1.5, 0.75",
			v.finite, v.min, v.max, v.mean())
	}
}

// randomSplit is a split of n MLPs with post-ReLU-like means: a fraction of
// them exactly 0, the rest spread over several orders of magnitude.
func randomSplit(
	t *testing.T,
	parent, name string,
	n, w, d int,
	seed uint64,
) (string, [][]float32, []float64) {
	rng := rand.New(rand.NewPCG(seed, 9))
	lms := make([][]float32, n)
	avg := make([]float64, n)
	for i := range lms {
		lms[i] = make([]float32, w*d)
		for j := range lms[i] {
			if rng.IntN(10) > j%w {
				lms[i][j] = float32(math.Exp(rng.NormFloat64()))
			}
		}
		avg[i] = rng.ExpFloat64()
	}
	created := time.Date(2026, 11, 2, 0, 0, 0, n, time.UTC)
	return split(t, parent, name, w, d, lms, avg, created), lms, avg
}

func TestStatisticsOfEachSplitMatchTheRowsComputedDirectly(t *testing.T) {
	tmp := t.TempDir()
	const w, d = 6, 4
	pub, pubMeans, pubVar := randomSplit(t, tmp, "public", 50, w, d, 1)
	hold, holdMeans, holdVar := randomSplit(t, tmp, "holdout", 17, w, d, 2)
	out := filepath.Join(tmp, "combined")
	if err := Combine([]string{pub, hold}, out, ""); err != nil {
		t.Fatal(err)
	}
	st := statsOf(t, out)
	for i, want := range []struct {
		name  string
		means [][]float32
		vars  []float64
	}{{"public", pubMeans, pubVar}, {"holdout", holdMeans, holdVar}} {
		s := st.Splits[i]
		if s.Name != want.name || s.NMLPs != int64(len(want.means)) {
			t.Fatalf("split %d is %s with %d MLPs, want %s with %d",
				i, s.Name, s.NMLPs, want.name, len(want.means))
		}
		for l := range d {
			// Two passes over the layer's values: the textbook definitions.
			var vals []float64
			dead := 0
			for _, lm := range want.means {
				for _, v := range lm[l*w : (l+1)*w] {
					vals = append(vals, float64(v))
					if v == 0 {
						dead++
					}
				}
			}
			var sum, sq float64
			for _, v := range vals {
				sum += v
			}
			mean := sum / float64(len(vals))
			for _, v := range vals {
				sq += (v - mean) * (v - mean)
			}
			got := s.Layers[l]
			variance := sq / float64(len(vals))
			deadShare := float64(dead) / float64(len(vals))
			if !near(got.Mean, mean) ||
				!near(got.Variance(), variance) ||
				got.DeadFraction() != deadShare {
				t.Errorf("%s layer %d: mean %g variance %g dead %g, want %g %g %g", s.Name, l+1,
					got.Mean, got.Variance(), got.DeadFraction(), mean, variance, deadShare)
			}
			final := &s.FinalMeans
			if l == d-1 && (final.finite != int64(len(vals)) ||
				final.min != slices.Min(vals) ||
				final.max != slices.Max(vals)) {
				t.Errorf("%s final means: %d values in [%g, %g], want %d in [%g, %g]",
					s.Name, final.finite, final.min, final.max,
					len(vals), slices.Min(vals), slices.Max(vals))
			}
		}
		if s.AvgVariance.finite != int64(len(want.vars)) ||
			s.AvgVariance.max != slices.Max(want.vars) {
			t.Errorf("%s avg_variance: %d values, max %g; want %d, %g", s.Name,
				s.AvgVariance.finite, s.AvgVariance.max, len(want.vars), slices.Max(want.vars))
		}
	}
}

func TestReportHasEveryFigureAsAPNGAndOnOneSelfContainedPage(t *testing.T) {
	tmp := t.TempDir()
	pub, _, _ := randomSplit(t, tmp, "public", 30, 8, 5, 3)
	hold, _, _ := randomSplit(t, tmp, "holdout", 12, 8, 5, 4)
	out := filepath.Join(tmp, "combined")
	if err := Combine([]string{pub, hold}, out, ""); err != nil {
		t.Fatal(err)
	}
	files := datasettest.ReadReport(t, out)
	if len(files) != len(dataset.ReportFigures)+1 {
		t.Errorf("report/ holds %d files, want the %d figures and the page",
			len(files), len(dataset.ReportFigures))
	}
	page := string(files[dataset.ReportPage])
	for _, f := range dataset.ReportFigures {
		img, err := png.Decode(bytes.NewReader(files[f.File]))
		if err != nil {
			t.Errorf("%s is not a PNG: %v", f.File, err)
			continue
		}
		if b := img.Bounds(); b.Dx() != FigureWidth || b.Dy() != FigureHeight {
			t.Errorf("%s is %d×%d pixels, want %d×%d",
				f.File, b.Dx(), b.Dy(), FigureWidth, FigureHeight)
		}
		encoded := base64.StdEncoding.EncodeToString(files[f.File])
		if !strings.Contains(page, `src="data:image/png;base64,`+encoded+`"`) {
			t.Errorf("the page does not embed %s", f.File)
		}
		if !strings.Contains(page, f.Caption) {
			t.Errorf("the page has no heading %q", f.Caption)
		}
	}
	// Self-contained: nothing is fetched, so no URL but the data: ones.
	for _, re := range []string{
		`https?:`, `(src|href)="[^d#]`, `url\(`, `@import`, `<script`, `<link`,
	} {
		if m := regexp.MustCompile(re).FindString(page); m != "" {
			t.Errorf("the page refers outside itself: %q", m)
		}
	}
	// The key facts.
	for _, fact := range []string{
		"8 × 5",
		"<td>100</td>",
		"<td>public (default)</td>",
		"<td>holdout</td><td>holdout</td><td>12</td>",
		"<td>42</td>",
	} {
		if !strings.Contains(page, fact) {
			t.Errorf("the page lacks %q", fact)
		}
	}
}

func TestCardLinksEveryReportFileThatExists(t *testing.T) {
	dir := handmade(t, t.TempDir())
	if err := Write(dir); err != nil {
		t.Fatal(err)
	}
	card, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	links := regexp.MustCompile(`\]\((report/[^)]+)\)`).FindAllStringSubmatch(string(card), -1)
	if len(links) != len(dataset.ReportFigures)+1 {
		t.Errorf("the card links %d report files, want %d:\n%s",
			len(links), len(dataset.ReportFigures)+1, card)
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(l[1]))); err != nil {
			t.Errorf("the card links %s: %v", l[1], err)
		}
	}
}

func TestReportBytesDependOnlyOnTheRows(t *testing.T) {
	tmp := t.TempDir()
	a := handmade(t, filepath.Join(tmp, "a"))
	// The same rows baked at another time on another host: the metadata
	// differs, the report must not.
	b := handmade(t, filepath.Join(tmp, "b"))
	md, err := dataset.ReadMetadata(b)
	if err != nil {
		t.Fatal(err)
	}
	md.Set("created_at_utc", "2030-01-01T00:00:00+00:00")
	md.Set("hardware", dataset.NewObject().Set("hostname", "elsewhere"))
	data, err := md.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b, "metadata.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{a, b} {
		if err := Write(dir); err != nil {
			t.Fatal(err)
		}
	}
	first := datasettest.ReadReport(t, a)
	if other := datasettest.ReadReport(t, b); !mapsEqual(first, other) {
		t.Error("the same rows with other metadata give another report")
	}
	// A file the report did not write in its folder is refused, never
	// deleted (the report replaces the folder whole).
	stray := filepath.Join(a, dataset.ReportDir, "stray.png")
	if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Write(a); err == nil || !strings.Contains(err.Error(), `"stray.png"`) {
		t.Fatalf("report over a folder holding stray.png: %v", err)
	}
	if err := os.Remove(stray); err != nil {
		t.Fatal(err)
	}
	// Again: the same bytes, the report replaced as a whole, no staging left.
	if err := os.Mkdir(filepath.Join(a, ".report.tmp-crashed"), 0o755); err != nil {
		t.Fatal(err)
	}
	card := readFile(t, filepath.Join(a, "README.md"))
	if err := Write(a); err != nil {
		t.Fatal(err)
	}
	if again := datasettest.ReadReport(t, a); !mapsEqual(first, again) {
		t.Errorf("a second run changed the report: %d files", len(again))
	}
	if again := readFile(t, filepath.Join(a, "README.md")); !bytes.Equal(card, again) {
		t.Error("a second run changed the card")
	}
	if left, _ := filepath.Glob(filepath.Join(a, ".*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

func mapsEqual(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !bytes.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestReportOfAPartialIsRefusedAndWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	dir := filepath.Join(tmp, "part")
	rows := []dataset.Row{{
		MLPID:      2,
		Weights:    make([]float32, 4),
		LayerMeans: make([]float32, 2),
		FinalMeans: make([]float32, 2),
		Breakdown:  dataset.Breakdown(2, 1, 100, 1024, 0),
	}}
	md := dataset.NewBakeMetadata(dataset.BakeInfo{
		CreatedAt:        time.Now(),
		TotalMLPs:        4,
		Range:            [2]int{2, 3},
		NSamples:         100,
		Width:            2,
		Depth:            1,
		Sampler:          "philox",
		Engine:           "cpu",
		AlgorithmVersion: "philox-1",
		Device:           "cpu",
		ChunkSize:        1024,
		SeedFileSHA256:   strings.Repeat("0", 64),
	})
	if err := dataset.WriteDir(dir, md, bakeapi.Spec{Width: 2, Depth: 1}, rows); err != nil {
		t.Fatal(err)
	}
	err := Write(dir)
	if err == nil || !strings.Contains(err.Error(), "merge") {
		t.Errorf("report of a partial: %v, want a refusal that says to merge", err)
	}
	if _, err := os.Stat(filepath.Join(dir, dataset.ReportDir)); err == nil {
		t.Error("a refused report left report/ behind")
	}
}

// Combine makes its report from the rows as it reads them, once; the
// report is Write's of the combined dataset, byte for byte, and so is the
// card that links it.
func TestCombinesReportIsWritesOfItsOutput(t *testing.T) {
	tmp := t.TempDir()
	pub, _, _ := randomSplit(t, tmp, "public", 70, 6, 4, 1)
	hold, _, _ := randomSplit(t, tmp, "holdout", 33, 6, 4, 2)
	out := filepath.Join(tmp, "out")
	if err := Combine([]string{pub, hold}, out, ""); err != nil {
		t.Fatal(err)
	}
	combined := datasettest.ReadReport(t, out)
	card := readFile(t, filepath.Join(out, "README.md"))
	if err := Write(out); err != nil {
		t.Fatal(err)
	}
	if written := datasettest.ReadReport(t, out); !mapsEqual(combined, written) {
		t.Error("Combine's report differs from Write's of the same dataset")
	}
	if again := readFile(t, filepath.Join(out, "README.md")); !bytes.Equal(card, again) {
		t.Error("Combine's card differs from the one Write leaves")
	}
}

// A split's statistics gathered where its rows are merged, stored as JSON
// and read back, give CombineSummaries, which reads no row, the metadata,
// card and report that Combine writes of the same splits, byte for byte.
func TestCombineSummariesIsCombineWithoutTheRows(t *testing.T) {
	tmp := t.TempDir()
	pub, _, _ := randomSplit(t, tmp, "public", 70, 6, 4, 1)
	hold, _, _ := randomSplit(t, tmp, "holdout", 33, 6, 4, 2)
	full := filepath.Join(tmp, "full")
	if err := Combine([]string{pub, hold}, full, ""); err != nil {
		t.Fatal(err)
	}
	var inputs []string
	var splits []*Split
	for _, dir := range []string{pub, hold} {
		d, err := dataset.Open(dir, false)
		if err != nil {
			t.Fatal(err)
		}
		s := NewSplit(d.Splits[0].Name, d.Splits[0].Width, d.Splits[0].Depth)
		if err := d.Scan(func(_ *dataset.SplitData, r dataset.Row) error {
			s.Add(r)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back Split
		if err := json.Unmarshal(data, &back); err != nil {
			t.Fatal(err)
		}
		splits = append(splits, &back)
		meta := filepath.Join(tmp, "meta-"+d.Splits[0].Name)
		if err := os.Mkdir(meta, 0o755); err != nil {
			t.Fatal(err)
		}
		md := readFile(t, filepath.Join(dir, dataset.MetadataFile))
		if err := os.WriteFile(filepath.Join(meta, dataset.MetadataFile), md, 0o644); err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, meta)
	}
	made := filepath.Join(tmp, "made")
	if err := CombineSummaries(inputs, splits, made, ""); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{dataset.MetadataFile, "README.md"} {
		if !bytes.Equal(readFile(t, filepath.Join(full, f)), readFile(t, filepath.Join(made, f))) {
			t.Errorf("%s differs from Combine's", f)
		}
	}
	if !mapsEqual(datasettest.ReadReport(t, full), datasettest.ReadReport(t, made)) {
		t.Error("the report differs from Combine's")
	}
	if _, err := os.Stat(filepath.Join(made, "data")); !os.IsNotExist(err) {
		t.Errorf("CombineSummaries wrote data/ (%v)", err)
	}
}

// Statistics that Add could not have gathered are refused on reading.
func TestSplitStatisticsRefuseWhatAddCannotMake(t *testing.T) {
	for _, bad := range []string{
		`{"name":"p","width":0,"depth":1,"layers":[{}]}`,
		`{"name":"p","width":2,"depth":2,"layers":[{}]}`,
		`{"name":"p","width":2,"depth":1,"layers":[{}],"final_means":{"counts":[1],"finite":2}}`,
		`{"name":"p","width":2,"depth":1,"layers":[{}],"final_means":{"counts":[-1,2],"finite":1}}`,
	} {
		var s Split
		if err := json.Unmarshal([]byte(bad), &s); err == nil {
			t.Errorf("%s was taken", bad)
		}
	}
}
