package verify_test

import (
	"context"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/localbake"
	"github.com/whestbake/whestbake/internal/verify"
)

// localInput is a valid 5-MLP bake into a fresh directory.
func localInput(t *testing.T) localbake.Input {
	return localbake.Input{
		NMLPs:  5,
		Split:  "public",
		Config: "default",
		Spec: bakeapi.Spec{
			Width:    4,
			Depth:    2,
			NSamples: 256,
			Sampler:  bakeapi.SamplerPhilox,
		},
		Threads: 1,
		Output:  filepath.Join(t.TempDir(), "out"),
		Getenv:  func(string) string { return "" },
	}
}

const saltHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

// bakeDir bakes in (localInput's, edited) and opens the result.
func bakeDir(t *testing.T, edit func(*localbake.Input)) *dataset.Dir {
	t.Helper()
	in := localInput(t)
	edit(&in)
	p, err := localbake.Plan(in)
	if err != nil {
		t.Fatal(err)
	}
	err = localbake.WriteDir(context.Background(), localbake.WriteInput{
		Plan:    p,
		Engine:  gpuengine.CPU{},
		Threads: 1,
		Output:  in.Output,
	})
	if err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(in.Output, true)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// verified is Dataset of in, which must not fail, with the MLP IDs it
// checked and what became of their names.
func verified(t *testing.T, in verify.Input) (verify.Output, []int32, []string) {
	t.Helper()
	in.Threads = 1
	out, err := verify.Dataset(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int32
	var names []string
	for _, s := range out.Splits {
		for _, c := range s.Checks {
			ids = append(ids, c.MLPID)
			names = append(names, s.NameCheck(c))
		}
	}
	return out, ids, names
}

// K rows are spread evenly over the split, i·(n−1)/(K−1): rows 0, 2 and 4
// of 5 for K = 3; "all" or a K of n or more checks every row, a list the
// rows it names. An intact bake passes, names included.
func TestDatasetPicks(t *testing.T) {
	d := bakeDir(t, func(*localbake.Input) {})
	for _, c := range []struct {
		picks string
		k     int
		want  []int32
	}{
		{"", 3, []int32{0, 2, 4}},
		{"", 9, []int32{0, 1, 2, 3, 4}},
		{"all", 1, []int32{0, 1, 2, 3, 4}},
		{"3, 1", 1, []int32{1, 3}},
	} {
		out, ids, names := verified(t, verify.Input{Dataset: d, Picks: c.picks, K: c.k})
		if !reflect.DeepEqual(ids, c.want) || out.Failed != 0 {
			t.Errorf("picks %q, k %d: checked %v with %d failures, want %v", c.picks, c.k, ids,
				out.Failed, c.want)
		}
		for _, n := range names {
			if n != verify.NameOK {
				t.Errorf("picks %q: name %s", c.picks, n)
			}
		}
	}
	_, err := verify.Dataset(context.Background(), verify.Input{
		Dataset: d,
		Picks:   "1,7",
		Names:   func(f string) string { return "--" + f },
	})
	if want := `--mlps: "7" is not a row position in [0, 5)`; err == nil || err.Error() != want {
		t.Errorf("a pick beyond the split: %v, want %q", err, want)
	}
}

// Names are assigned over a whole split, so a partial's are not checked;
// under protocol 4.0 they derive from the salt, so a withheld one that is
// not in the environment leaves them unchecked too, while the weights and
// statistics are still checked.
func TestDatasetNames(t *testing.T) {
	partial := bakeDir(t, func(in *localbake.Input) { in.MLPRange = "1-2" })
	salt := map[string]string{dataset.SaltEnv: saltHex}
	withheld := bakeDir(t, func(in *localbake.Input) {
		in.Spec.SeedProtocol = bakeapi.SeedProtocolV4
		in.Spec.Salt = bakeapi.Salt{Withhold: true, ID: "h"}
		in.Getenv = func(k string) string { return salt[k] }
	})
	for _, c := range []struct {
		name   string
		dir    *dataset.Dir
		getenv func(string) string
		want   string
	}{
		{"partial", partial, nil, verify.NamePartial},
		{"withheld, not given", withheld, func(string) string { return "" }, verify.NameSaltWithheld},
		{"withheld, given", withheld, func(k string) string { return salt[k] }, verify.NameOK},
	} {
		out, _, names := verified(t, verify.Input{Dataset: c.dir, K: 2, Getenv: c.getenv})
		if out.Failed != 0 || len(names) != 2 || names[0] != c.want || names[1] != c.want {
			t.Errorf("%s: %d failed, names %v; want %s", c.name, out.Failed, names, c.want)
		}
	}
}

// A numpy split is recomputed with its recorded dot product unless Dot
// overrides it; Split leaves the other splits out.
func TestDatasetSplitInfo(t *testing.T) {
	d := bakeDir(t, func(in *localbake.Input) {
		in.Spec.Sampler = bakeapi.SamplerNumpy
		in.Spec.Dot = bakeapi.DotFMA
		in.Split = "dev"
	})
	dots := map[string]bakeapi.DotProduct{"": bakeapi.DotFMA, "muladd": bakeapi.DotMulAdd}
	for dot, want := range dots {
		out, _, _ := verified(t, verify.Input{
			Dataset: d,
			K:       1,
			Split:   "dev",
			Dot:     dot,
		})
		if len(out.Splits) != 1 || out.Splits[0].Name != "dev" ||
			out.Splits[0].Info.Spec.Dot != want {
			t.Errorf("dot %q: %+v, want one split dev recomputed with %s", dot, out.Splits, want)
		}
	}
	if out, ids, _ := verified(t, verify.Input{Dataset: d, K: 1, Split: "other"}); len(ids) != 0 {
		t.Errorf("another split: %+v", out)
	}
}
