package pyjudge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
)

// keyRule is how a key of metadata.json (or of one of its objects) is
// compared between whest's and whestbake's.
type keyRule int

const (
	// same: both write it, with the same value.
	same keyRule = iota
	// ownName: both write it; each names itself.
	ownName
	// clock: both write it; the UTC time it was written.
	clock
	// oneHost: both write it; both ran on this host, so the value is the
	// same fact read by each.
	oneHost
	// probed: both write it; each asks the host another way (below).
	probed
	// nested: an object or list of objects, compared by its own rules.
	nested
	// whestOnly: whestbench's provenance, which whestbake does not write.
	whestOnly
	// oursOnly: whestbake's provenance, which whestbench does not write.
	oursOnly
	// counted: both write it; whestbench's mlp_count counts partials,
	// whestbake's MLPs (checkFingerprints).
	counted
)

// metadataRules are the keys of metadata.json, of a bake (create_dataset,
// dataset.py) and of a merge (merge_datasets, dataset_io.py). docs/WHESTBENCH.md
// lists the same.
var metadataRules = map[string]keyRule{
	"schema_version": same,
	"format":         same,
	"seed_protocol":  same,
	"split":          same,
	"config":         same,
	"n_mlps":         same,
	"n_samples":      same,
	"width":          same,
	"depth":          same,
	"is_partial":     same,
	"mlp_range":      same,
	"total_n_mlps":   same,
	"partials_count": same,
	// whestbench's CPU backend writes "flopscope", whestbake "whestbake":
	// merge refuses partials of two backends on both sides.
	"backend":               ownName,
	"created_at_utc":        clock,
	"merged_at_utc":         clock,
	"hardware":              nested,
	"hardware_fingerprints": nested,
	"whestbench_version":    whestOnly,
	"flopscope_version":     whestOnly,
	// What computed the numbers, so that a bake can be reproduced and
	// partials of different samplers are never merged.
	"whestbake_version": oursOnly,
	"sampler":           oursOnly,
	"engine":            oursOnly,
	"algorithm_version": oursOnly,
	"dot_product":       oursOnly,
	"device":            oursOnly,
	"chunk_size":        oursOnly,
	"seed_file_sha256":  oursOnly,
}

// hardwareRules are the keys of the hardware block
// (hardware.py collect_hardware_fingerprint; dataset/hardware.go).
var hardwareRules = map[string]keyRule{
	"hostname":        oneHost,
	"os":              oneHost,
	"os_release":      oneHost,
	"machine":         oneHost,
	"ram_total_bytes": oneHost,
	// Python's platform.platform() adds the C library ("-with-glibc2.36");
	// platform.processor() is `uname -p`, "unknown" on most Linux, where
	// whestbake reads /proc/cpuinfo's model name; os.cpu_count() counts the
	// machine's CPUs, Go's runtime.NumCPU() those this process may use.
	"platform":          probed,
	"cpu_brand":         probed,
	"cpu_count_logical": probed,
	// Python's, numpy's and flopscope's versions; psutil's figures.
	"python_version":      whestOnly,
	"numpy_version":       whestOnly,
	"flopscope_version":   whestOnly,
	"cpu_count_physical":  whestOnly,
	"ram_available_bytes": whestOnly,
	"go_version":          oursOnly,
}

// fingerprintRules are the keys of an entry of hardware_fingerprints
// (dataset_io.py _collapse_hardware_fingerprints; dataset/fingerprints.go).
var fingerprintRules = map[string]keyRule{
	"os":                       oneHost,
	"ram_total_bytes":          oneHost,
	"kernels_seen":             oneHost,
	"representative_hostnames": oneHost,
	"cpu_brand":                probed,
	"cpu_count_logical":        probed,
	"mlp_count":                counted,
	"python_version":           whestOnly,
	"numpy_version":            whestOnly,
	"whestbench_version":       whestOnly,
	"flopscope_version":        whestOnly,
	"device":                   oursOnly,
	"engine":                   oursOnly,
	"go_version":               oursOnly,
	"whestbake_version":        oursOnly,
	"partials_count":           oursOnly,
}

// object is a JSON object with its keys in file order.
type object struct {
	keys []string
	vals map[string]any
}

func decodeObject(t *testing.T, raw []byte) object {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	o := object{vals: map[string]any{}}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %.200s", raw)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		k := tok.(string)
		o.keys = append(o.keys, k)
		o.vals[k] = v
	}
	return o
}

// value decodes the raw value of key k.
func (o object) value(t *testing.T, k string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(o.vals[k].(json.RawMessage)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func metadataString(t *testing.T, text, key string) string {
	t.Helper()
	s, _ := decodeObject(t, []byte(text)).value(t, key).(string)
	return s
}

// compareKeys applies rules to every key of theirs and ours, the objects at
// path, and returns the keys both write, in their order in ours, after
// checking that theirs has them in the same order.
func compareKeys(t *testing.T, path string, rules map[string]keyRule, theirs, ours object) []string {
	t.Helper()
	all := slices.Clone(theirs.keys)
	for _, k := range ours.keys {
		if _, ok := theirs.vals[k]; !ok {
			all = append(all, k)
		}
	}
	for _, k := range all {
		rule, ok := rules[k]
		_, inTheirs := theirs.vals[k]
		_, inOurs := ours.vals[k]
		switch {
		case !ok:
			t.Errorf("%s%s: no rule says how whestbake compares with whest here (add one, and "+
				"to docs/WHESTBENCH.md)", path, k)
		case rule == whestOnly && inOurs:
			t.Errorf("%s%s is whestbench's own, but whestbake writes it", path, k)
		case rule == oursOnly && inTheirs:
			t.Errorf("%s%s is whestbake's own, but whest writes it too", path, k)
		case rule != whestOnly && rule != oursOnly && inTheirs != inOurs:
			t.Errorf("%s%s: written by whest %v, by whestbake %v", path, k, inTheirs, inOurs)
		}
	}
	var shared []string
	for _, k := range ours.keys {
		if _, ok := theirs.vals[k]; ok {
			shared = append(shared, k)
		}
	}
	var theirOrder []string
	for _, k := range theirs.keys {
		if _, ok := ours.vals[k]; ok {
			theirOrder = append(theirOrder, k)
		}
	}
	if !slices.Equal(shared, theirOrder) {
		t.Errorf("%skeys both write come in another order:\nwhest:     %v\nwhestbake: %v", path, theirOrder, shared)
	}
	for _, k := range shared {
		a, b := theirs.value(t, k), ours.value(t, k)
		if r := rules[k]; (r == same || r == oneHost) && !reflect.DeepEqual(a, b) {
			t.Errorf("%s%s: whest %v, whestbake %v", path, k, a, b)
		}
	}
	return shared
}

// checkMetadata compares whest's metadata.json text theirs with
// whestbake's ours, key by key under metadataRules.
func checkMetadata(t *testing.T, r *bakeRun, theirsText, oursText string) {
	t.Helper()
	theirs, ours := decodeObject(t, []byte(theirsText)), decodeObject(t, []byte(oursText))
	compareKeys(t, "", metadataRules, theirs, ours)
	if a, b := theirs.value(t, "backend"), ours.value(t, "backend"); a != "flopscope" || b != "whestbake" {
		t.Errorf("backend: whest %v, whestbake %v; want flopscope and whestbake", a, b)
	}
	for _, k := range []string{"created_at_utc", "merged_at_utc"} {
		for side, o := range []object{theirs, ours} {
			if _, ok := o.vals[k]; !ok {
				continue
			}
			s, _ := o.value(t, k).(string)
			if _, err := time.Parse("2006-01-02T15:04:05.999999-07:00", s); err != nil || s[len(s)-6:] != "+00:00" {
				t.Errorf("%s of side %d is %q: not Python's isoformat() of a UTC time", k, side, s)
			}
		}
	}
	if _, ok := theirs.vals["hardware"]; ok {
		compareKeys(t, "hardware.", hardwareRules,
			decodeObject(t, theirs.vals["hardware"].(json.RawMessage)),
			decodeObject(t, ours.vals["hardware"].(json.RawMessage)))
	}
	if _, ok := theirs.vals["hardware_fingerprints"]; ok {
		checkFingerprints(t, r, theirs, ours)
	}
	checkOurKeys(t, r, ours)
}

// checkFingerprints compares the hardware_fingerprints of two merged
// splits: one host, so one entry each. whestbench's mlp_count counts the
// partials of the group (len(mds)), whestbake's the MLPs, with the
// partials in partials_count.
func checkFingerprints(t *testing.T, r *bakeRun, theirs, ours object) {
	t.Helper()
	var a, b []json.RawMessage
	if json.Unmarshal(theirs.vals["hardware_fingerprints"].(json.RawMessage), &a) != nil ||
		json.Unmarshal(ours.vals["hardware_fingerprints"].(json.RawMessage), &b) != nil ||
		len(a) != 1 || len(b) != 1 {
		t.Fatalf("hardware_fingerprints of one host: whest %d entries, whestbake %d", len(a), len(b))
	}
	fa, fb := decodeObject(t, a[0]), decodeObject(t, b[0])
	compareKeys(t, "hardware_fingerprints[0].", fingerprintRules, fa, fb)
	parts := fmt.Sprint(len(r.c.parts))
	if got := fmt.Sprint(fa.value(t, "mlp_count")); got != parts {
		t.Errorf("whest's mlp_count %s, want its %s partials", got, parts)
	}
	if got := fmt.Sprint(fb.value(t, "mlp_count")); got != fmt.Sprint(len(r.c.seeds)) {
		t.Errorf("whestbake's mlp_count %s, want its %d MLPs", got, len(r.c.seeds))
	}
	if got := fmt.Sprint(fb.value(t, "partials_count")); got != parts {
		t.Errorf("whestbake's partials_count %s, want %s", got, parts)
	}
}

// checkOurKeys checks what whestbake's own keys say about the bake.
func checkOurKeys(t *testing.T, r *bakeRun, ours object) {
	t.Helper()
	want := map[string]string{
		"sampler":           "numpy",
		"algorithm_version": bakeapi.NumpyAlgorithm,
		"dot_product":       r.c.dotProduct(),
		"device":            "cpu",
		"chunk_size":        fmt.Sprint(cpuChunk(r.c.width)),
		"seed_file_sha256":  r.seedsSHA256(t),
	}
	for k, v := range want {
		if got := fmt.Sprint(ours.value(t, k)); got != v {
			t.Errorf("whestbake's %s is %s, want %s", k, got, v)
		}
	}
}

// breakdownTimings are the keys of sampling_budget_breakdown, and of its
// namespaces and operations, that hold times: whestbench measures them
// while it bakes (flopscope's BudgetContext), whestbake writes 0 so that a
// row is a function of its seed and shape alone.
var breakdownTimings = []string{
	"wall_time_s", "flopscope_backend_time_s", "flopscope_overhead_time_s", "residual_wall_time_s",
}

// checkBreakdown compares a row's sampling_budget_breakdown: the same
// FLOPs, calls and budget per operation as whestbench's CPU bake counts
// them; times measured there and 0 here; and whestbake's two keys of
// whestbench's torch backend (dataset_torch.py _synthesize_sampling_breakdown),
// time_source and provenance. Key order is not compared: whest reads the
// object by key (scoring.py _normalize_sampling_budget_breakdown).
func checkBreakdown(t *testing.T, where string, c bakeCase, theirs, ours string) {
	t.Helper()
	var a, b map[string]any
	for _, p := range []struct {
		text string
		v    *map[string]any
	}{{theirs, &a}, {ours, &b}} {
		dec := json.NewDecoder(bytes.NewReader([]byte(p.text)))
		dec.UseNumber()
		if err := dec.Decode(p.v); err != nil {
			t.Fatalf("%s: breakdown is not JSON: %v", where, err)
		}
	}
	if b["time_source"] != "bake" {
		t.Errorf("%s: whestbake's time_source %v, want bake", where, b["time_source"])
	}
	prov, _ := b["provenance"].(map[string]any)
	chunk := cpuChunk(c.width)
	if fmt.Sprint(prov["chunk_size"]) != fmt.Sprint(chunk) ||
		fmt.Sprint(prov["n_chunks"]) != fmt.Sprint((c.nSamples+int64(chunk)-1)/int64(chunk)) {
		t.Errorf("%s: whestbake's provenance %v, want chunk_size %d", where, prov, chunk)
	}
	delete(b, "time_source")
	delete(b, "provenance")
	compareBreakdown(t, where+": sampling_budget_breakdown", a, b)
}

// compareBreakdown compares two objects of a breakdown, recursively.
func compareBreakdown(t *testing.T, path string, theirs, ours map[string]any) {
	t.Helper()
	for k := range ours {
		if _, ok := theirs[k]; !ok {
			t.Errorf("%s.%s: whestbake writes it, whest does not", path, k)
		}
	}
	for k, a := range theirs {
		b, ok := ours[k]
		switch {
		case !ok:
			t.Errorf("%s.%s: whest writes it, whestbake does not", path, k)
		case slices.Contains(breakdownTimings, k):
			at, errA := a.(json.Number).Float64()
			bt, errB := b.(json.Number).Float64()
			if errA != nil || errB != nil || at < 0 || bt != 0 {
				t.Errorf("%s.%s: whest %v (a time), whestbake %v (0)", path, k, a, b)
			}
		default:
			ao, aIsObj := a.(map[string]any)
			bo, bIsObj := b.(map[string]any)
			if aIsObj && bIsObj {
				compareBreakdown(t, path+"."+k, ao, bo)
			} else if !reflect.DeepEqual(a, b) {
				t.Errorf("%s.%s: whest %v, whestbake %v", path, k, a, b)
			}
		}
	}
}
