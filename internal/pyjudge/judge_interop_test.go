package pyjudge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/whestbake/whestbake/dataset"
)

// The interop tests' shape: small enough that whestbench's own bake, which
// runs flopscope in Python, takes well under a second an MLP.
const (
	iopWidth, iopDepth = 4, 2
	iopSamples         = "100"
)

// job is one request to testdata/interop.py, whose docstring lists them.
type job map[string]any

// answer is interop.py's answer to one job; which fields are set depends
// on the job's kind.
type answer struct {
	Error string `json:"error"`
	// whest
	Code           int
	Stdout, Stderr string
	// parquet
	Rows []any `json:"rows"`
	// the loaders
	Splits   map[string]loadedSplit `json:"splits"`
	Metadata map[string]any         `json:"metadata"`
}

// loadedSplit is one split as a loader returned it.
type loadedSplit struct {
	Rows       []any  `json:"rows"`
	From       string `json:"from"`
	FeaturesOK bool   `json:"features_ok"`
}

// judge runs jobs in order in one Python process, so that a test starts
// Python once, with an HF cache of its own that nothing outside the test
// shares and no network.
func judge(t *testing.T, env *Env, jobs ...job) []answer {
	t.Helper()
	dir := t.TempDir()
	req, res := filepath.Join(dir, "request.json"), filepath.Join(dir, "result.json")
	b, err := json.Marshal(map[string]any{"jobs": jobs})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(req, b, 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "interop.py"))
	if err != nil {
		t.Fatal(err)
	}
	env.ok(t, Cmd{Env: []string{
		"HF_HOME=" + filepath.Join(dir, "hf"),
		"HF_HUB_OFFLINE=1",
		"HF_DATASETS_OFFLINE=1",
	}}, env.Python, script, req, res)
	var out []answer
	if err := decodeJSONFile(res, &out); err != nil {
		t.Fatal(err)
	}
	if len(out) != len(jobs) {
		t.Fatalf("interop.py answered %d of %d jobs", len(out), len(jobs))
	}
	return out
}

// decodeJSONFile decodes path keeping numbers as written: seeds are int63s,
// which a float64 would round.
func decodeJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// whestJob runs `whest ARGS...`.
func whestJob(args ...string) job { return job{"kind": "whest", "argv": args} }

// loadJob loads dir with a loader: "whestbench" (config unused),
// "datasets", or "disk" (dir is then a prepared split's folder).
func loadJob(kind, dir, config, split string) job {
	j := job{"kind": kind, "path": dir, "width": iopWidth, "depth": iopDepth}
	if config != "" {
		j["config"] = config
	}
	if split != "" {
		j["split"] = split
	}
	return j
}

// whestOK fails the test unless a whest job exited 0, and returns what it
// printed.
func whestOK(t *testing.T, a answer, what string) string {
	t.Helper()
	if a.Error != "" || a.Code != 0 {
		t.Fatalf("whest %s: exit %d %s\nstdout:\n%s\nstderr:\n%s",
			what, a.Code, a.Error, a.Stdout, a.Stderr)
	}
	return a.Stdout
}

// loaded fails the test unless a loader job succeeded.
func loaded(t *testing.T, a answer, what string) answer {
	t.Helper()
	if a.Error != "" {
		t.Fatalf("%s: %s", what, a.Error)
	}
	return a
}

// ourRows reads every split of dir with whestbake's own reader, each row
// in interop.py's canonical form.
func ourRows(t *testing.T, dir string) map[string][]any {
	t.Helper()
	d, err := dataset.ReadDir(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]any{}
	for _, s := range d.Splits {
		rows := make([]any, len(s.Rows))
		for i, r := range s.Rows {
			rows[i] = canonicalRow(t, r, s.Width, s.Depth)
		}
		out[s.Name] = rows
	}
	return out
}

// canonicalRow is r as interop.py writes a row: floats as the hex of
// their double bits, the arrays nested as datasets' Array3D and Array2D
// features return them, the numbers as JSON numbers.
func canonicalRow(t *testing.T, r dataset.Row, w, d int) any {
	t.Helper()
	bits := func(fs []float32) []string {
		out := make([]string, len(fs))
		for i, f := range fs {
			out[i] = fmt.Sprintf("%016x", math.Float64bits(float64(f)))
		}
		return out
	}
	weights := make([][][]string, d)
	means := make([][]string, d)
	for l := range d {
		means[l] = bits(r.LayerMeans[l*w : (l+1)*w])
		weights[l] = make([][]string, w)
		for i := range w {
			at := (l*w + i) * w
			weights[l][i] = bits(r.Weights[at : at+w])
		}
	}
	row := map[string]any{
		"mlp_id":                    r.MLPID,
		"mlp_name":                  r.Name,
		"mlp_seed":                  r.Seed,
		"weights":                   weights,
		"all_layer_means":           means,
		"final_means":               bits(r.FinalMeans),
		"avg_variance":              fmt.Sprintf("%016x", math.Float64bits(r.AvgVariance)),
		"sampling_budget_breakdown": r.Breakdown,
	}
	b, err := json.Marshal(row)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	d2 := json.NewDecoder(bytes.NewReader(b))
	d2.UseNumber()
	if err := d2.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameRows fails unless got holds want's rows, bit for bit, in order,
// naming the first row and column that differ.
func sameRows(t *testing.T, what string, got, want []any) {
	t.Helper()
	if len(want) == 0 {
		t.Fatalf("%s: no rows to compare with", what)
	}
	if len(got) != len(want) {
		t.Errorf("%s: %d rows, want %d", what, len(got), len(want))
		return
	}
	for i := range want {
		g, _ := got[i].(map[string]any)
		w, _ := want[i].(map[string]any)
		if len(g) != len(w) {
			t.Errorf("%s: row %d has columns %v, want %v", what, i, keys(g), keys(w))
			return
		}
		for _, c := range keys(w) {
			if !reflect.DeepEqual(g[c], w[c]) {
				t.Errorf("%s: row %d column %s differs:\n got %v\nwant %v", what, i, c, g[c], w[c])
				return
			}
		}
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// readMetadata decodes dir's metadata.json.
func readMetadata(t *testing.T, dir string) map[string]any {
	t.Helper()
	var md map[string]any
	if err := decodeJSONFile(filepath.Join(dir, "metadata.json"), &md); err != nil {
		t.Fatal(err)
	}
	return md
}

// metadataDiff lists the dotted paths where a and b differ: a key only one
// has, or a value that is not equal. It descends into objects only; a
// list that differs is one path.
func metadataDiff(a, b map[string]any) []string {
	var out []string
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		xo, xok := x.(map[string]any)
		yo, yok := y.(map[string]any)
		if !xok || !yok {
			if !reflect.DeepEqual(x, y) {
				out = append(out, path)
			}
			return
		}
		all := map[string]bool{}
		for k := range xo {
			all[k] = true
		}
		for k := range yo {
			all[k] = true
		}
		for k := range all {
			xv, xin := xo[k]
			yv, yin := yo[k]
			p := strings.TrimPrefix(path+"."+k, ".")
			if xin != yin {
				out = append(out, p)
				continue
			}
			walk(p, xv, yv)
		}
	}
	walk("", a, b)
	sort.Strings(out)
	return out
}

// cardConfigs is the meaning of dir's card front matter for datasets:
// each config's splits and their data file patterns (the order of configs
// and of a config's files changes no load), and the config load_dataset
// takes without a name (MetadataConfigs.get_default_config_name in
// datasets/utils/metadata.py: "default", else the only one); nil without
// a configs block.
func cardConfigs(t *testing.T, dir string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	front, ok := strings.CutPrefix(string(b), "---\n")
	if i := strings.Index(front, "\n---\n"); ok && i >= 0 {
		front = front[:i]
	} else {
		t.Fatalf("%s/README.md has no YAML front matter", dir)
	}
	var card struct {
		Configs []struct {
			Name      string `yaml:"config_name"`
			Default   bool   `yaml:"default"`
			DataFiles []struct {
				Split string `yaml:"split"`
				Path  any    `yaml:"path"`
			} `yaml:"data_files"`
		} `yaml:"configs"`
	}
	if err := yaml.Unmarshal([]byte(front), &card); err != nil {
		t.Fatalf("%s/README.md front matter: %v", dir, err)
	}
	if len(card.Configs) == 0 {
		return nil
	}
	configs := map[string]any{}
	var names []string
	defaultName := ""
	for _, c := range card.Configs {
		splits := map[string]any{}
		for _, f := range c.DataFiles {
			splits[f.Split] = fmt.Sprint(f.Path)
		}
		configs[c.Name] = splits
		names = append(names, c.Name)
		if c.Default {
			defaultName = c.Name
		}
	}
	switch {
	case defaultName != "":
	case slices.Contains(names, "default"):
		defaultName = "default"
	case len(names) == 1:
		defaultName = names[0]
	}
	return map[string]any{"configs": configs, "default": defaultName}
}

// seedsFile writes n distinct seeds from root for --mlp-seeds, with
// whestbake's generate-seeds.
func seedsFile(t *testing.T, dir string, n, root int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("seeds-%d.json", root))
	whestbake(t, "dataset", "generate-seeds", "--n-mlps", fmt.Sprint(n),
		"--seed", fmt.Sprint(root), "--output", path)
	return path
}

// bakeArgs are the arguments of a bake of the interop shape, the same for
// whest and whestbake, before each one's own.
func bakeArgs(n int, seeds, split, config, out string, more ...string) []string {
	args := []string{"dataset", "bake", "--n-mlps", fmt.Sprint(n), "--n-samples", iopSamples,
		"--width", fmt.Sprint(iopWidth), "--depth", fmt.Sprint(iopDepth),
		"--mlp-seeds", seeds, "--split", split, "--config", config, "--output", out}
	return append(args, more...)
}
