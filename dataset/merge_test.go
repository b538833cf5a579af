package dataset

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// mergedAt is the merge time the tests record.
var mergedAt = time.Date(2026, 11, 23, 1, 2, 3, 0, time.UTC)

// bakePartials writes the partials of a total-MLP bake cut at the given
// boundaries, e.g. cuts {0, 3, 7, 10}.
func bakePartials(
	t *testing.T,
	parent string,
	shape bakeapi.Spec,
	split string,
	cuts []int,
	edit func(i int, info *BakeInfo),
) []string {
	t.Helper()
	var dirs []string
	total := cuts[len(cuts)-1]
	for i := 0; i+1 < len(cuts); i++ {
		info := testInfo(shape, total, cuts[i], cuts[i+1])
		info.Split = split
		if edit != nil {
			edit(i, &info)
		}
		dirs = append(dirs, writeTestDir(t, parent, "part"+string(rune('a'+i)), info))
	}
	return dirs
}

func TestMergeEqualsDirectBake(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 8, Depth: 2}
	cuts := []int{0, 3, 7, 10}
	parts := bakePartials(t, parent, shape, "mycustom", cuts, func(i int, info *BakeInfo) {
		info.Hardware.Hostname = []string{"h1", "h2", "h3"}[i]
		info.Hardware.OSRelease = []string{"6.1", "6.2", "6.1"}[i]
		info.Driver = []string{"550", "555", ""}[i]
	})
	out := filepath.Join(parent, "merged")
	// Input order does not matter: partials are sorted by range.
	if err := Merge([]string{parts[2], parts[0], parts[1]}, out, mergedAt); err != nil {
		t.Fatal(err)
	}
	direct := writeTestDir(t, parent, "direct", func() BakeInfo {
		info := testInfo(shape, 10, 0, 0)
		info.Split = "mycustom"
		return info
	}())
	name := "data/mycustom-00000-of-00001.parquet"
	got, err := os.ReadFile(filepath.Join(out, name))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(direct, name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Error("merged parquet differs from a direct bake of the same rows")
	}
	d, err := ReadDir(out, false)
	if err != nil {
		t.Fatal(err)
	}
	md := d.Meta
	for _, k := range []string{"is_partial", "mlp_range", "total_n_mlps", "hardware"} {
		if md.Has(k) {
			t.Errorf("merged metadata keeps %s", k)
		}
	}
	if n, _ := md.GetInt("n_mlps"); n != 10 {
		t.Errorf("n_mlps %d", n)
	}
	if c, _ := md.GetString("created_at_utc"); c != "2026-11-22T10:00:00+00:00" {
		t.Errorf("created_at_utc %s, want the earliest partial's", c)
	}
	keys := md.Keys()
	tail := strings.Join(keys[len(keys)-4:], ",")
	if tail != "created_at_utc,merged_at_utc,hardware_fingerprints,partials_count" {
		t.Errorf("merged keys end with %s", tail)
	}
	if keys[5] != "config" || keys[6] != "n_mlps" {
		t.Errorf("n_mlps moved: %v", keys)
	}
	if m, _ := md.GetString("merged_at_utc"); m != "2026-11-23T01:02:03+00:00" {
		t.Errorf("merged_at_utc %s", m)
	}
	fps, _ := md.GetArray("hardware_fingerprints")
	if len(fps) != 1 {
		t.Fatalf("one device, one engine: %d fingerprints", len(fps))
	}
	fp := fps[0].(*Object)
	enc, _ := pyjson.Dumps(fp, false)
	wantFP := `{"device": "cpu", "engine": "cpu", "cpu_brand": "cpu-x", ` +
		`"cpu_count_logical": 8, "go_version": "go1.26.8", "os": "Linux", ` +
		`"whestbake_version": "0.1.0", "mlp_count": 10, "partials_count": 3, ` +
		`"drivers_seen": ["550", "555"], "kernels_seen": ["6.1", "6.2"], ` +
		`"representative_hostnames": ["h1", "h2", "h3"]}`
	if string(enc) != wantFP {
		t.Errorf("fingerprint\n got %s\nwant %s", enc, wantFP)
	}
	if p, _ := md.GetInt("partials_count"); p != 3 {
		t.Errorf("partials_count %d", p)
	}
	card, _ := os.ReadFile(filepath.Join(out, "README.md"))
	if !strings.Contains(string(card), "Assembled from 3 partial bakes") {
		t.Error("card does not say the dataset was merged")
	}
}

func TestMergeFingerprintsSplitByDevice(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	cuts := []int{0, 1, 2, 3}
	parts := bakePartials(t, parent, shape, "public", cuts, func(i int, info *BakeInfo) {
		info.Device = []string{"NVIDIA H100", "NVIDIA H200", "NVIDIA H100"}[i]
		info.Engine = "cuda"
	})
	out := filepath.Join(parent, "merged")
	if err := Merge(parts, out, mergedAt); err != nil {
		t.Fatal(err)
	}
	md, _ := ReadMetadata(out)
	fps, _ := md.GetArray("hardware_fingerprints")
	if len(fps) != 2 {
		t.Fatalf("%d fingerprints, want 2", len(fps))
	}
	first := fps[0].(*Object)
	if d, _ := first.GetString("device"); d != "NVIDIA H100" {
		t.Errorf("first group %s", d)
	}
	if n, _ := first.GetInt("partials_count"); n != 2 {
		t.Errorf("H100 group has %d partials", n)
	}
}

func TestMergeSinglePartialCoveringAll(t *testing.T) {
	parent := t.TempDir()
	info := testInfo(bakeapi.Spec{Width: 4, Depth: 2}, 3, 0, 3)
	info.Range = [2]int{1, 3} // make it partial, then cover [0, 3) with two
	a := writeTestDir(t, parent, "a", info)
	info.Range = [2]int{0, 1}
	b := writeTestDir(t, parent, "b", info)
	if err := Merge([]string{a, b}, filepath.Join(parent, "out"), mergedAt); err != nil {
		t.Fatal(err)
	}
}

func TestMergeRefusals(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	// twoPartials bakes MLPs [0, 4) of a public split as two partials, edited.
	twoPartials := func(t *testing.T, parent string, edit func(int, *BakeInfo)) []string {
		return bakePartials(t, parent, shape, "public", []int{0, 2, 4}, edit)
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, parent string) []string
		check func(t *testing.T, err error)
	}{
		{"no inputs", func(t *testing.T, parent string) []string { return nil },
			wantErr[*MergeIncompatibleError]("at least one input")},
		{"overlap", func(t *testing.T, parent string) []string {
			a := bakePartials(t, parent, shape, "public", []int{0, 3, 6}, nil)
			info := testInfo(shape, 6, 2, 4)
			return append(a, writeTestDir(t, parent, "x", info))
		}, wantErr[*MergeOverlapError]("starts at 2", "ended at 3")},
		{"gap", func(t *testing.T, parent string) []string {
			a := bakePartials(t, parent, shape, "public", []int{0, 2, 5, 8}, nil)
			return []string{a[0], a[2]}
		}, wantErr[*MergeIncompleteError]("[2, 5)")},
		{"tail gap", func(t *testing.T, parent string) []string {
			return bakePartials(t, parent, shape, "public", []int{0, 2, 5, 8}, nil)[:2]
		}, wantErr[*MergeIncompleteError]("[5, 8)")},
		{"complete input", func(t *testing.T, parent string) []string {
			return []string{writeTestDir(t, parent, "full", testInfo(shape, 3, 0, 0))}
		}, wantErr[*MergeIncompatibleError]("complete (non-partial)")},
		{"sampler", func(t *testing.T, parent string) []string {
			return twoPartials(t, parent, func(i int, info *BakeInfo) {
				if i == 1 {
					info.Sampler = "numpy"
				}
			})
		}, wantErr[*MergeIncompatibleError](
			"sampler=\"numpy\"", "sampler=\"philox\"", "parta", "partb")},
		{"seeds file", func(t *testing.T, parent string) []string {
			return twoPartials(t, parent, func(i int, info *BakeInfo) {
				if i == 1 {
					info.SeedFileSHA256 = strings.Repeat("1", 64)
				}
			})
		}, wantErr[*MergeIncompatibleError]("seed_file_sha256")},
		{"algorithm", func(t *testing.T, parent string) []string {
			return twoPartials(t, parent, func(i int, info *BakeInfo) {
				if i == 1 {
					info.AlgorithmVersion = "philox-2"
				}
			})
		}, wantErr[*MergeIncompatibleError]("algorithm_version")},
		{"tf32x3 of two GPU architectures", func(t *testing.T, parent string) []string {
			return twoPartials(t, parent, func(i int, info *BakeInfo) {
				tc := bakeapi.TensorCores{Arch: "sm_90", Kernel: "k1", GPU: "H200",
					Driver: "580", NVRTC: "13.0", Scheme: "3xtf32"}
				if i == 1 {
					tc.Arch, tc.GPU = "sm_80", "A100"
				}
				info.AlgorithmVersion = bakeapi.PhiloxTF32x3Algorithm
				info.Engine = "cuda/" + tc.String()
			})
		}, wantErr[*MergeIncompatibleError]("tf32x3", "sm_80", "sm_90", "parta", "partb")},
		{"seed protocol", func(t *testing.T, parent string) []string {
			return twoPartials(t, parent, func(i int, info *BakeInfo) {
				if i == 1 {
					info.Salt = &SaltRecord{Digest: testSaltDigest, Hex: testSalt}
				}
			})
		}, func(t *testing.T, err error) {
			schematest.WantErr[*MergeIncompatibleError](t, err,
				"seed_protocol", SeedProtocolV4Name, SeedProtocolV3Name, testSaltDigest)
			if strings.Contains(err.Error(), testSalt) {
				t.Errorf("the error shows the salt: %v", err)
			}
		}},
		{"salt", func(t *testing.T, parent string) []string {
			return twoPartials(t, parent, func(i int, info *BakeInfo) {
				info.Salt = &SaltRecord{Digest: testSaltDigest, ID: "h1"}
				if i == 1 {
					info.Salt.ID = "h2"
				}
			})
		}, wantErr[*MergeIncompatibleError]("seed_protocol", `"salt_id": "h2"`)},
		{"n_samples", func(t *testing.T, parent string) []string {
			return twoPartials(t, parent, func(i int, info *BakeInfo) {
				if i == 1 {
					info.NSamples = 5
				}
			})
		}, wantErr[*MergeIncompatibleError]("n_samples=5")},
		{"total", func(t *testing.T, parent string) []string {
			a := writeTestDir(t, parent, "a", testInfo(shape, 4, 0, 2))
			return []string{a, writeTestDir(t, parent, "b", testInfo(shape, 5, 2, 5))}
		}, wantErr[*MergeIncompatibleError]("total_n_mlps")},
		{"split", func(t *testing.T, parent string) []string {
			a := bakePartials(t, parent, shape, "public", []int{0, 2, 4}, nil)
			b := bakePartials(t, filepath.Join(parent, "b"), shape, "holdout", []int{0, 2, 4}, nil)
			return []string{a[0], b[1]}
		}, wantErr[*MergeIncompatibleError]("holdout", "public")},
		{"corrupt ids", func(t *testing.T, parent string) []string {
			a := writeTestDir(t, parent, "a", testInfo(shape, 4, 0, 2))
			info := testInfo(shape, 4, 2, 4)
			dir := filepath.Join(parent, "bad")
			rows := schematest.Rows(shape, 2, 2)
			rows[1].MLPID = 9
			if err := WriteDir(dir, NewBakeMetadata(info), shape, rows); err != nil {
				t.Fatal(err)
			}
			return []string{a, dir}
		}, wantErr[*MergeCorruptError]("mlp_id=9", "[2, 4)")},
		{"row count", func(t *testing.T, parent string) []string {
			a := writeTestDir(t, parent, "a", testInfo(shape, 5, 0, 2))
			md := NewBakeMetadata(testInfo(shape, 5, 2, 5))
			md.Set("n_mlps", 2)
			dir := filepath.Join(parent, "short")
			if err := WriteDir(dir, md, shape, schematest.Rows(shape, 2, 2)); err != nil {
				t.Fatal(err)
			}
			return []string{a, dir}
		}, wantErr[*MergeCorruptError]("holds 2 rows", "[2, 5)")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			inputs := c.setup(t, parent)
			out := filepath.Join(t.TempDir(), "out")
			err := Merge(inputs, out, mergedAt)
			c.check(t, err)
			if _, statErr := os.Stat(out); statErr == nil {
				t.Error("failed merge left its output")
			}
			if left := dirEntries(t, filepath.Dir(out)); len(left) != 0 {
				t.Errorf("failed merge left %v", left)
			}
		})
	}
}

func TestMergeRefusesExistingOutputBeforeReading(t *testing.T) {
	out := t.TempDir()
	err := Merge([]string{"/nonexistent/partial"}, out, mergedAt)
	schematest.WantErr[*OutputExistsError](t, err, out)
}

func TestMergeErrorsAreInvalidDatasetErrors(t *testing.T) {
	for _, err := range []error{
		&MergeIncompatibleError{"a"},
		&MergeIncompleteError{"b"},
		&MergeOverlapError{"c"},
		&MergeCorruptError{"d"},
	} {
		schematest.WantErr[*InvalidDatasetError](t, err, err.Error())
	}
}

// inOrder yields dirs one at a time and deletes each one once the merge asks
// for the next, as a merge that fetches its partials from a store does; err,
// when not nil, is yielded after the first failAfter dirs.
func inOrder(t *testing.T, dirs []string, failAfter int, err error) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for i, d := range dirs {
			if err != nil && i == failAfter {
				yield("", err)
				return
			}
			more := yield(d, nil)
			if rmErr := os.RemoveAll(d); rmErr != nil {
				t.Error(rmErr)
			}
			if !more {
				return
			}
		}
	}
}

func TestMergeStreamHoldsOnePartialAtATime(t *testing.T) {
	parent := t.TempDir()
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	cuts := []int{0, 1, 2, 3, 5, 6, 9}
	parts := bakePartials(t, parent, shape, "public", cuts, func(i int, info *BakeInfo) {
		info.Hardware.Hostname = fmt.Sprintf("h%d", i)
	})
	direct := writeTestDir(t, parent, "direct", testInfo(shape, 9, 0, 0))
	out := filepath.Join(parent, "merged")
	// Each partial is gone once the next is asked for: a merge that went back
	// to one, or read ahead of what it was given, fails.
	if err := MergeStream(out, mergedAt, inOrder(t, parts, 0, nil)); err != nil {
		t.Fatal(err)
	}
	name := "data/public-00000-of-00001.parquet"
	got, _ := os.ReadFile(filepath.Join(out, name))
	want, _ := os.ReadFile(filepath.Join(direct, name))
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Error("merged parquet differs from a direct bake of the same rows")
	}
	md, err := ReadMetadata(out)
	if err != nil {
		t.Fatal(err)
	}
	fps, _ := md.GetArray("hardware_fingerprints")
	if len(fps) != 1 {
		t.Fatalf("%d fingerprints, want one group for one kind of host", len(fps))
	}
	enc, _ := pyjson.Dumps(fps[0], false)
	if !strings.Contains(string(enc), `"mlp_count": 9, "partials_count": 6`) ||
		!strings.Contains(string(enc), `"representative_hostnames": ["h0", "h1", "h2"]`) {
		t.Errorf("fingerprint %s, want 9 MLPs from 6 partials and the first three hosts", enc)
	}
	if n, _ := md.GetInt("partials_count"); n != 6 {
		t.Errorf("partials_count %d, want 6", n)
	}
}

func TestMergeStreamRefusals(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	fetchErr := errors.New("slice 2 could not be fetched")
	cases := []struct {
		name  string
		parts func(parts []string) iter.Seq2[string, error]
		check func(t *testing.T, err error)
	}{
		{"no partials", func([]string) iter.Seq2[string, error] { return inOrder(t, nil, 0, nil) },
			wantErr[*MergeIncompatibleError]("at least one input")},
		// A stream is merged in the order it comes: it is not sorted.
		{"out of order", func(p []string) iter.Seq2[string, error] {
			return inOrder(t, []string{p[1], p[0], p[2]}, 0, nil)
		}, wantErr[*MergeIncompleteError]("[0, 2)")},
		{"missing tail", func(p []string) iter.Seq2[string, error] {
			return inOrder(t, p[:2], 0, nil)
		}, wantErr[*MergeIncompleteError]("[4, 6)")},
		{"fetch failure", func(p []string) iter.Seq2[string, error] {
			return inOrder(t, p, 2, fetchErr)
		},
			func(t *testing.T, err error) {
				if !errors.Is(err, fetchErr) {
					t.Errorf("error %v, want the source's own", err)
				}
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			parts := bakePartials(t, parent, shape, "public", []int{0, 2, 4, 6}, nil)
			out := filepath.Join(t.TempDir(), "out")
			c.check(t, MergeStream(out, mergedAt, c.parts(parts)))
			if left := dirEntries(t, filepath.Dir(out)); len(left) != 0 {
				t.Errorf("failed merge left %v", left)
			}
		})
	}
}
