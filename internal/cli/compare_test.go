package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/compare"
)

// compareJSON runs `dataset compare --json` and returns the exit code and
// the result (nil unless the exit code is 0 or 1).
func compareJSON(t *testing.T, args ...string) (int, *compare.Result, string) {
	t.Helper()
	code, out, errs := run(t, append([]string{"dataset", "compare", "--json"}, args...)...)
	if code == 2 {
		return code, nil, errs
	}
	var r compare.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("compare --json %v: exit %d, %v\n%s%s", args, code, err, out, errs)
	}
	return code, &r, errs
}

// rewrite writes a copy of the single-split dataset (or partial) src to
// dst with its rows changed by edit.
func rewrite(t *testing.T, src, dst string, edit func(rows []dataset.Row)) string {
	t.Helper()
	d, err := dataset.ReadDir(src, true)
	if err != nil {
		t.Fatal(err)
	}
	rows := d.Splits[0].Rows
	edit(rows)
	shape := bakeapi.Spec{Width: d.Splits[0].Width, Depth: d.Splits[0].Depth}
	if err := dataset.WriteDir(dst, d.Meta, shape, rows); err != nil {
		t.Fatal(err)
	}
	return dst
}

// Statistical ground truth for --mode stat. Correct bakes of the same MLPs
// by the two samplers (philox and numpy share no random numbers) at several
// n_samples, shapes deep and wide, and across sample counts, must be called
// equivalent: the false-alarm rate is at most alpha for each comparison when
// σ̂ bounds every neuron's standard deviation, and the z values, far below
// the threshold, show the margin of that bound. Wrong datasets must be
// caught: another layer's means in place of each layer's (at W=16 and
// W=64), and one neuron's mean shifted by 1.5
// times the smallest shift the test promises to see; a third of that
// shift is within Monte Carlo error and passes. avg_variance has its own
// test, judged the same way: correct bakes pass it, and a change of 1.5
// times its smallest detectable one is caught, a third of it is not.
func TestCompareStatistical(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	seeds := writeFile(t, at("seeds.json"), "[11, 22, 33, 44, 55, 66, 77, 88]")
	bake := func(sampler, n, w, d string) string {
		out := at(fmt.Sprintf("%s-%s-%sx%s", sampler, n, w, d))
		if _, err := os.Stat(out); err == nil {
			return out
		}
		mustRun(t, "dataset", "bake", "--n-mlps", "8", "--n-samples", n, "--width", w, "--depth", d,
			"--mlp-seeds", seeds, "--sampler", sampler, "--threads", "1", "--output", out)
		return out
	}
	maxZ, maxNorm, maxVarZ := 0.0, 0.0, 0.0
	for _, c := range []struct{ samplesA, samplesB, width, depth string }{
		{"300", "300", "16", "4"}, {"3000", "3000", "16", "4"}, {"30000", "30000", "16", "4"},
		{"3000", "30000", "16", "4"}, {"10000", "10000", "4", "8"}, {"10000", "10000", "64", "2"},
	} {
		a := bake("philox", c.samplesA, c.width, c.depth)
		b := bake("numpy", c.samplesB, c.width, c.depth)
		code, r, errs := compareJSON(t, a, b)
		if code != 0 || r.Mode != compare.ModeStat || !r.Same {
			t.Errorf("%v: exit %d, mode %s, same %v: two correct bakes called different\n%s",
				c, code, r.Mode, r.Same, errs)
			continue
		}
		for _, m := range r.Splits[0].MLPStats {
			maxZ = max(maxZ, m.MaxZ)
			maxNorm = max(maxNorm, m.LayerNorm)
			maxVarZ = max(maxVarZ, m.VarianceZ)
		}
	}
	// Over these 3,000 neurons standard normals would reach about 3.5; σ̂
	// bounds each neuron's deviation by a layer's total, so these stay
	// under 2 (when written: 1.16 and 1.24).
	t.Logf("correct bakes: largest |z| %.2f, largest ‖z_l‖ %.2f, largest avg_variance |z| %.3f",
		maxZ, maxNorm, maxVarZ)
	if maxZ > 2 || maxNorm > 2 {
		t.Errorf("largest |z| %.2f and ‖z_l‖ %.2f of correct bakes: "+
			"σ̂ is not the conservative bound it is documented as", maxZ, maxNorm)
	}

	ref := bake("numpy", "30000", "16", "4")
	ph := at("philox-30000-16x4")
	// Another layer's means.
	shifted := rewrite(t, ref, at("other-layer"), func(rows []dataset.Row) {
		for i := range rows {
			m := rows[i].LayerMeans
			rows[i].LayerMeans = append(append([]float32{}, m[16:]...), m[:16]...)
		}
	})
	code, r, _ := compareJSON(t, ph, shifted)
	if code != 1 || r.Same || r.Splits[0].DifferentMLPs != 8 {
		t.Errorf("another layer's means: exit %d, %d of 8 MLPs called different",
			code, r.Splits[0].DifferentMLPs)
	}
	// The same at W=64.
	wideNumpy := bake("numpy", "10000", "64", "2")
	wide := rewrite(t, wideNumpy, at("other-layer-wide"), func(rows []dataset.Row) {
		for i := range rows {
			m := rows[i].LayerMeans
			rows[i].LayerMeans = append(append([]float32{}, m[64:]...), m[:64]...)
		}
	})
	code, r, _ = compareJSON(t, bake("philox", "10000", "64", "2"), wide)
	if code != 1 || r.Splits[0].DifferentMLPs != 8 {
		t.Errorf("another layer's means at W=64: exit %d, %d of 8 MLPs called different",
			code, r.Splits[0].DifferentMLPs)
	}
	// One neuron of MLP 3 shifted, by multiples of the smallest shift the
	// test is bound to see: the threshold times the standard error from
	// compare's σ̂ for that MLP.
	code, r, _ = compareJSON(t, ph, ref)
	if code != 0 {
		t.Fatalf("philox and numpy at 30000 samples: exit %d", code)
	}
	sigma := r.Splits[0].MLPStats[3].Sigma
	detectable := r.Threshold * sigma * math.Sqrt(2.0/30000)
	for _, c := range []struct {
		factor float64
		caught bool
	}{{1.5, true}, {1.0 / 3, false}} {
		name := fmt.Sprintf("shift-%g", c.factor)
		out := rewrite(t, ref, at(name), func(rows []dataset.Row) {
			rows[3].LayerMeans[5] += float32(c.factor * detectable)
		})
		code, r, _ := compareJSON(t, ph, out)
		if c.caught && (code != 1 ||
			r.Splits[0].DifferentMLPs != 1 ||
			r.Differences[0].MLPID != 3 ||
			r.Differences[0].Index != 5) {
			t.Errorf("%s: exit %d, differences %+v; want MLP 3 neuron 5 caught",
				name, code, r.Differences)
		}
		if !c.caught && code != 0 {
			t.Errorf("%s: exit %d; a shift within Monte Carlo error must pass", name, code)
		}
	}
	// avg_variance of MLP 3 raised, by multiples of the smallest change
	// the test is bound to see against the reference's own value.
	d, err := dataset.ReadDir(ph, false)
	if err != nil {
		t.Fatal(err)
	}
	v := d.Splits[0].Rows[3].AvgVariance
	detectableV := r.Threshold * compare.VarianceSpread * v * math.Sqrt(2.0/30000)
	for _, c := range []struct {
		factor float64
		caught bool
	}{{1.5, true}, {1.0 / 3, false}} {
		name := fmt.Sprintf("variance-%g", c.factor)
		out := rewrite(t, ref, at(name), func(rows []dataset.Row) {
			rows[3].AvgVariance = v + c.factor*detectableV
		})
		code, r, _ := compareJSON(t, ph, out)
		if c.caught && (code != 1 ||
			r.Splits[0].DifferentMLPs != 1 ||
			!strings.HasPrefix(r.Differences[0].Field, "avg_variance")) {
			t.Errorf("%s: exit %d, differences %+v; want MLP 3's avg_variance caught",
				name, code, r.Differences)
		}
		if !c.caught && code != 0 {
			t.Errorf("%s: exit %d; a change within Monte Carlo error must pass", name, code)
		}
	}
}

// --mode exact against independent truth: whestbench's own fixture and our
// numpy bake of its seeds are identical (the numpy sampler is whestbench's
// CPU backend bit for bit), which compare must confirm once asked (the
// fixture records a backend, not a sampler, so the default is stat); a
// thread count changes no bit of a philox bake; a flipped weight bit, a
// changed mean and an avg_variance beyond the tolerance are differences,
// an avg_variance an ULP off is not.
func TestCompareExact(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	fixture := filepath.Join("..", "..", "testdata", "whestbench-fixtures",
		"single_split_v3_protocol")
	ours := at("ours")
	fixtureSeeds := writeFile(t, at("ss.json"), "[1001,2002,3003,4004]")
	mustRun(t, "dataset", "bake", "--n-mlps", "4", "--n-samples", "100",
		"--width", "4", "--depth", "2", "--mlp-seeds", fixtureSeeds,
		"--sampler", "numpy", "--dot-product", "fma", "--threads", "1", "-o", ours)
	if code, r, _ := compareJSON(t, fixture, ours, "--mode", "exact"); code != 0 || !r.Same {
		t.Errorf("whestbench's fixture and our bake of its seeds: exit %d %+v", code, r.Differences)
	}
	if _, r, _ := compareJSON(t, fixture, ours); r.Mode != compare.ModeStat {
		t.Errorf("default mode for a whestbench dataset and a numpy bake: %s", r.Mode)
	}
	seeds := writeFile(t, at("px.json"), "[5, 6, 7]")
	p1, p2 := at("p1"), at("p2")
	for i, p := range []string{p1, p2} {
		mustRun(t, "dataset", "bake", "--n-mlps", "3", "--n-samples", "2000",
			"--width", "8", "--depth", "3",
			"--mlp-seeds", seeds, "--threads", fmt.Sprint(i+1), "--chunk-size", "256", "-o", p)
	}
	code, out, _ := run(t, "dataset", "compare", p1, p2)
	if code != 0 || !strings.Contains(out, "mode exact") || !strings.Contains(out, "✓ identical") {
		t.Errorf("philox bakes on 1 and 2 threads: exit %d\n%s", code, out)
	}
	for _, c := range []struct {
		name   string
		edit   func(r *dataset.Row)
		field  string
		differ bool
	}{
		{"weight", func(r *dataset.Row) {
			r.Weights[7] = math.Float32frombits(math.Float32bits(r.Weights[7]) ^ 1)
		}, "weights", true},
		{"mean", func(r *dataset.Row) {
			r.LayerMeans[3] = math.Nextafter32(r.LayerMeans[3], 10)
		}, "all_layer_means", true},
		{"variance", func(r *dataset.Row) { r.AvgVariance *= 1 + 1e-9 }, "avg_variance", true},
		{"variance-ulp", func(r *dataset.Row) {
			r.AvgVariance = math.Nextafter(r.AvgVariance, 10)
		}, "", false},
	} {
		b := rewrite(t, p1, at(c.name), func(rows []dataset.Row) { c.edit(&rows[1]) })
		code, r, _ := compareJSON(t, p1, b)
		if !c.differ {
			if code != 0 {
				t.Errorf("%s: exit %d %+v", c.name, code, r.Differences)
			}
			continue
		}
		if code != 1 || len(r.Differences) != 1 ||
			r.Differences[0].Field != c.field || r.Differences[0].MLPID != 1 {
			t.Errorf("%s: exit %d, differences %+v", c.name, code, r.Differences)
		}
	}
	// In stat mode too, weights must be the same bits.
	b := rewrite(t, p1, at("weight-stat"), func(rows []dataset.Row) {
		rows[2].Weights[0] = -rows[2].Weights[0]
	})
	code, r, _ := compareJSON(t, p1, b, "--mode", "stat")
	if code != 1 || r.Differences[0].Field != "weights" {
		t.Errorf("stat mode with other weights: exit %d", code)
	}
}

// Datasets that cannot be compared exit 2 with a message naming what
// differs; so do bad flags and a config file that does not load.
func TestCompareRefusesBadInput(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	bake := func(out, seeds, w, split string) string {
		mustRun(t, "dataset", "bake", "--n-mlps", "2", "--n-samples", "100",
			"--width", w, "--depth", "2",
			"--mlp-seeds", writeFile(t, out+".json", seeds), "--split", split, "-o", out)
		return out
	}
	a := bake(at("a"), "[1, 2]", "4", "public")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{a, bake(at("seeds"), "[1, 3]", "4", "public")}, "mlp_seed 2 in A, 3 in B"},
		{[]string{a, bake(at("shape"), "[1, 2]", "8", "public")}, "width=4 depth=2"},
		{[]string{a, bake(at("split"), "[1, 2]", "4", "holdout")}, "compare needs the same splits"},
		{[]string{a, at("missing")}, "does not exist"},
		{[]string{a, a, "--mode", "fuzzy"}, "use exact, stat or tf32x3"},
		{[]string{a, a, "--alpha", "2"}, "--alpha"},
		// Any failure, not only bad input: 1 would say "different".
		{[]string{a, a, "--config-file", "/dev/zero"}, "larger than 1 MiB"},
	} {
		code, _, errs := run(t, append([]string{"dataset", "compare"}, c.args...)...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("compare %v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
}

// Multi-split datasets are compared split by split, matched by name
// whatever order their metadata lists them in.
func TestCompareMultiSplitByName(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	bakeSplits(t, dir, map[string]string{"public": "[1, 2]", "holdout": "[3, 4]"},
		"--n-mlps", "2", "--n-samples", "500", "--width", "4", "--depth", "2")
	mustRun(t, "dataset", "combine-splits", at("public"), at("holdout"), "-o", at("ab"))
	mustRun(t, "dataset", "combine-splits", at("holdout"), at("public"), "-o", at("ba"))
	code, r, _ := compareJSON(t, at("ab"), at("ba"))
	if code != 0 || r.Mode != compare.ModeExact || len(r.Splits) != 2 ||
		r.Splits[0].Name != "public" || r.Splits[1].Name != "holdout" {
		t.Errorf("exit %d, %+v", code, r)
	}
}

func TestThresholdIsBonferroni(t *testing.T) {
	for _, n := range []int64{1, 100, 1e6} {
		z := compare.Threshold(1e-3, n)
		if p := float64(n) * math.Erfc(z/math.Sqrt2); math.Abs(p-1e-3) > 1e-9 {
			t.Errorf("n=%d: threshold %g gives an overall rate %g", n, z, p)
		}
	}
	if z := compare.Threshold(1e-3, 1); math.Abs(z-3.2905) > 1e-4 {
		t.Errorf("two-sided 0.1%% quantile %g, want 3.2905", z)
	}
}

// The cases: B is a wrong dataset (every final_means shifted by
// +0.25, or set to 0, with or without all_layer_means' last layer) whose
// avg_variance is large enough to widen any spread taken from it. Such a B
// is different, in both orders and both modes; an infinite avg_variance is
// refused (exit 2) in both orders. The spread comes from a bound neither
// side can inflate, so a mere change of B's avg_variance is caught too.
func TestCompareCannotBeFooledByTheSideUnderTest(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	seeds := writeFile(t, at("seeds.json"), "[11, 22, 33, 44]")
	bake := func(sampler string) string {
		out := at(sampler)
		mustRun(t, "dataset", "bake", "--n-mlps", "4", "--n-samples", "3000",
			"--width", "16", "--depth", "4",
			"--mlp-seeds", seeds, "--sampler", sampler, "--threads", "1", "--output", out)
		return out
	}
	a, b := bake("philox"), bake("numpy")
	if code, _, errs := compareJSON(t, a, b); code != 0 {
		t.Fatalf("two correct bakes: exit %d %s", code, errs)
	}
	const w = 16
	wrong := func(name string, final func(float32) float32, lastLayer bool, variance float64,
	) string {
		return rewrite(t, b, at(name), func(rows []dataset.Row) {
			for i := range rows {
				r := &rows[i]
				for j := range r.FinalMeans {
					r.FinalMeans[j] = final(r.FinalMeans[j])
					if lastLayer {
						r.LayerMeans[len(r.LayerMeans)-w+j] = r.FinalMeans[j]
					}
				}
				if variance != 0 {
					r.AvgVariance = variance
				}
			}
		})
	}
	shift := func(m float32) float32 { return m + 0.25 }
	zero := func(float32) float32 { return 0 }
	same := func(m float32) float32 { return m }
	for _, c := range []struct {
		name  string
		wrong string
	}{
		{"final+0.25, avg_variance 1e30", wrong("shift-1e30", shift, false, 1e30)},
		{"final and last layer +0.25, avg_variance 1e30",
			wrong("shift-layer-1e30", shift, true, 1e30)},
		{"final 0, avg_variance 1e30", wrong("zero-1e30", zero, false, 1e30)},
		{"final and last layer 0, avg_variance 1e30", wrong("zero-layer-1e30", zero, true, 1e30)},
		{"avg_variance 1e30 alone", wrong("var-1e30", same, false, 1e30)},
		{"avg_variance 0 alone", wrong("var-0", same, false, math.SmallestNonzeroFloat64)},
	} {
		for _, mode := range []string{"stat", "exact"} {
			for _, order := range [][2]string{{a, c.wrong}, {c.wrong, a}} {
				code, r, errs := compareJSON(t, order[0], order[1], "--mode", mode)
				if code != 1 || r.Same {
					t.Errorf("%s, --mode %s, %s first: exit %d; want 1 (different)\n%s",
						c.name, mode, filepath.Base(order[0]), code, errs)
				}
			}
		}
	}
	for _, v := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		bad := wrong(fmt.Sprintf("var-%v", v), shift, true, v)
		for _, order := range [][2]string{{a, bad}, {bad, a}} {
			for _, json := range []bool{false, true} {
				args := []string{"dataset", "compare", order[0], order[1]}
				if json {
					args = append(args, "--json")
				}
				code, out, errs := run(t, args...)
				if code != 2 ||
					!strings.Contains(errs, "avg_variance is "+fmt.Sprint(v)) ||
					!strings.Contains(errs, ".parquet, row 0") {
					t.Errorf("avg_variance %v, %v: exit %d, stdout %q, stderr %q; "+
						"want 2 naming the file, row and field", v, args[2:], code, out, errs)
				}
			}
		}
	}
}

// compare.VarianceSpread bounds ρ = Σ_j sqrt(μ4_j − σ_j⁴) / Σ_j σ_j² of
// real MLPs, the factor by which avg_variance's Monte Carlo spread exceeds
// v/√n (docs/WHESTBENCH.md), with a margin of at least two: measured here
// from the moments of the final layer of whestbench's MLPs (its weights for
// each seed; Gaussian inputs pushed through in float64), on the narrow
// deep shapes where ρ is largest.
func TestVarianceSpreadBoundsMeasuredRho(t *testing.T) {
	const samples = 4000
	worst := 0.0
	for _, shape := range [][2]int{{4, 2}, {4, 8}, {8, 8}, {16, 8}} {
		w, d := shape[0], shape[1]
		for seed := range int64(100) {
			job, err := gpuengine.JobForSeed(bakeapi.Spec{Width: w, Depth: d}, 1000+seed)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			var m1, m2, m3, m4 [16]float64
			x, y := make([]float64, w), make([]float64, w)
			for range samples {
				for i := range x {
					x[i] = rng.NormFloat64()
				}
				for l := range d {
					for j := range w {
						acc := 0.0
						for i := range w {
							acc += x[i] * float64(job.Weights[l*w*w+i*w+j])
						}
						y[j] = max(acc, 0)
					}
					x, y = y, x
				}
				for j, v := range x {
					m1[j] += v
					m2[j] += v * v
					m3[j] += v * v * v
					m4[j] += v * v * v * v
				}
			}
			var num, den float64
			for j := range w {
				mu, e2, e3, e4 := m1[j]/samples, m2[j]/samples, m3[j]/samples, m4[j]/samples
				v := e2 - mu*mu
				c4 := e4 - 4*mu*e3 + 6*mu*mu*e2 - 3*mu*mu*mu*mu
				num += math.Sqrt(max(0, c4-v*v))
				den += v
			}
			if den > 0 {
				worst = max(worst, num/den)
			}
		}
	}
	t.Logf("largest ρ over 400 MLPs: %.1f; VarianceSpread %d", worst, compare.VarianceSpread)
	if worst > compare.VarianceSpread/2 {
		t.Errorf("ρ reaches %.1f: VarianceSpread %d leaves less than a factor of two",
			worst, compare.VarianceSpread)
	}
}

// A tf32x3 bake and an fp32 one of the same MLPs and samples compare in mode tf32x3:
// means within bakeapi.TF32x3MeanTolerance of their layer's largest pass, a mean beyond
// it is caught; two tf32x3 bakes on tensor cores that give the same bits compare bit for
// bit, on other tensor cores within twice the tolerance.
func TestCompareTF32x3(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	seeds := writeFile(t, at("s.json"), "[7, 8, 9]")
	fp32 := at("fp32")
	mustRun(t, "dataset", "bake", "--n-mlps", "3", "--n-samples", "2000", "--width", "8",
		"--depth", "3", "--mlp-seeds", seeds, "--threads", "1", "-o", fp32)
	id := bakeapi.TensorCores{GPU: "NVIDIA H200", Arch: "sm_90", Driver: "13.0", NVRTC: "13.0",
		Scheme: "s", Kernel: strings.Repeat("ab", 32)}
	tf32 := func(name string, id bakeapi.TensorCores, shift float64) string {
		d, err := dataset.ReadDir(fp32, true)
		if err != nil {
			t.Fatal(err)
		}
		d.Meta.Set("algorithm_version", bakeapi.PhiloxTF32x3Algorithm).Set("engine", "cuda/"+id.String())
		rows := d.Splits[0].Rows
		scale := float32(0)
		for _, m := range rows[1].LayerMeans[8:16] {
			scale = max(scale, m)
		}
		rows[1].LayerMeans[10] += float32(shift) * scale
		shape := bakeapi.Spec{Width: 8, Depth: 3}
		if err := dataset.WriteDir(at(name), d.Meta, shape, rows); err != nil {
			t.Fatal(err)
		}
		return at(name)
	}
	near := tf32("near", id, 0.2*bakeapi.TF32x3MeanTolerance)
	far := tf32("far", id, 3*bakeapi.TF32x3MeanTolerance)
	code, out, _ := run(t, "dataset", "compare", fp32, near)
	if code != 0 || !strings.Contains(out, "mode tf32x3") || !strings.Contains(out, "✓ within tf32x3") {
		t.Errorf("fp32 against a tf32x3 bake within the tolerance: exit %d\n%s", code, out)
	}
	if code, r, _ := compareJSON(t, fp32, far); code != 1 || r.Mode != compare.ModeTF32x3 ||
		len(r.Differences) != 1 || r.Differences[0].Index != 10 || r.Differences[0].MLPID != 1 {
		t.Errorf("a mean beyond the tolerance: exit %d %+v", code, r)
	}
	if code, r, _ := compareJSON(t, near, tf32("same", id, 0.2*bakeapi.TF32x3MeanTolerance)); code != 0 ||
		r.Mode != compare.ModeExact {
		t.Errorf("two tf32x3 bakes with the same bits: exit %d, mode %s", code, r.Mode)
	}
	other := id
	other.Arch = "sm_80"
	below := tf32("other", other, -1.5*bakeapi.TF32x3MeanTolerance)
	if code, r, _ := compareJSON(t, near, below); code != 0 || r.Mode != compare.ModeTF32x3 {
		t.Errorf("tf32x3 bakes on other tensor cores, each within the tolerance of fp32: "+
			"exit %d, mode %s %+v", code, r.Mode, r.Differences)
	}
	if code, _, _ := compareJSON(t, far, below); code != 1 {
		t.Errorf("tf32x3 bakes on other tensor cores 4.5 tolerances apart: exit %d", code)
	}
}
