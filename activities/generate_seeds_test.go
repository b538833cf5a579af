package activities_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/gpuengine"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/mlps"
)

// numpySeeds12345 are whestbench's input seeds for root seed 12345 (numpy
// PCG64 random_raw >> 1, seeds/testdata/vectors.json, made by gen_vectors.py).
var numpySeeds12345 = []int64{
	2096804712593481934,
	2921580012919480943,
	7354398262316660716,
	6237348419996972168,
	3607348892368485766,
	3069666675758614433,
	5518424227241521870,
	1722318865822139695,
	6205079283989499670,
	8686598211760444927,
}

func storedSeeds(t *testing.T, f *fixture, out bakeapi.GenerateSeedsOutput) []int64 {
	t.Helper()
	data, err := f.st.Get(context.Background(), out.SeedsKey)
	if err != nil {
		t.Fatal(err)
	}
	sf, err := mlps.ParseSeeds(out.SeedsKey, data, out.NMLPs)
	if err != nil {
		t.Fatal(err)
	}
	if sf.SHA256 != out.SHA256 {
		t.Errorf("output sha256 %s, stored file %s", out.SHA256, sf.SHA256)
	}
	return sf.Seeds
}

func testGenerateSeedsMatchesNumpy(t *testing.T, f *fixture) {
	a := f.acts(gpuengine.CPU{})
	root := uint64(12345)
	out := mustRun[bakeapi.GenerateSeedsOutput](
		t,
		a,
		a.GenerateSeeds,
		bakeapi.GenerateSeedsInput{
			BakeID: "np",
			Split:  "public",
			NMLPs:  10,
			Seed:   &root,
		},
	)
	if out.SeedsKey != keys.Bake("np").Seeds("public") || out.NMLPs != 10 {
		t.Errorf("output %+v, want key %s", out, keys.Bake("np").Seeds("public"))
	}
	if got := storedSeeds(t, f, out); !slices.Equal(got, numpySeeds12345) {
		t.Errorf("seeds %v, numpy %v", got, numpySeeds12345)
	}
}

// testGenerateSeedsIsCreateOnly: entropy seeds are drawn once; every later
// attempt, whatever its input, returns the stored file.
func testGenerateSeedsIsCreateOnly(t *testing.T, f *fixture) {
	a := f.acts(gpuengine.CPU{})
	in := bakeapi.GenerateSeedsInput{BakeID: "once", Split: "public", NMLPs: 8}
	first := mustRun[bakeapi.GenerateSeedsOutput](t, a, a.GenerateSeeds, in)
	want := storedSeeds(t, f, first)
	second := mustRun[bakeapi.GenerateSeedsOutput](t, a, a.GenerateSeeds, in)
	root := uint64(1)
	in.Seed = &root
	third := mustRun[bakeapi.GenerateSeedsOutput](t, a, a.GenerateSeeds, in)
	for _, o := range []bakeapi.GenerateSeedsOutput{second, third} {
		if o != first {
			t.Errorf("retry returned %+v, want the first attempt's %+v", o, first)
		}
	}
	if got := storedSeeds(t, f, third); !slices.Equal(got, want) {
		t.Errorf("stored seeds changed from %v to %v", want, got)
	}
}

// testGenerateSeedsRefusesAChangedSeedsFile: a split's stored seeds file
// rewritten after its identity blocks were written from it (another valid
// list) is refused, naming it, instead of naming the split's MLPs anew.
func testGenerateSeedsRefusesAChangedSeedsFile(t *testing.T, f *fixture) {
	a := f.acts(gpuengine.CPU{})
	root := uint64(3)
	in := bakeapi.GenerateSeedsInput{
		BakeID: "reseeded",
		Split:  "public",
		NMLPs:  3,
		Seed:   &root,
	}
	first := mustRun[bakeapi.GenerateSeedsOutput](t, a, a.GenerateSeeds, in)
	if err := f.st.Put(context.Background(), first.SeedsKey, []byte("[5, 6, 7]\n")); err != nil {
		t.Fatal(err)
	}
	_, err := run[bakeapi.GenerateSeedsOutput](a, a.GenerateSeeds, in)
	app := wantAppError(t, err, bakeapi.ErrInvalidSeeds)
	if !strings.Contains(app.Error(), first.SeedsKey) ||
		!strings.Contains(app.Error(), "changed after the bake stored it") {
		t.Errorf(
			"GenerateSeeds on a changed seeds file: %v, want a refusal naming %s",
			app,
			first.SeedsKey,
		)
	}
}

func testGenerateSeedsFromUpload(t *testing.T, f *fixture) {
	a := f.acts(gpuengine.CPU{})
	ctx := context.Background()
	b := keys.Bake("up")
	upload := []byte("[3, 1, 4]\n")
	if err := f.st.PutCreate(ctx, b.InputSeeds("public"), upload); err != nil {
		t.Fatal(err)
	}
	out := mustRun[bakeapi.GenerateSeedsOutput](
		t,
		a,
		a.GenerateSeeds,
		bakeapi.GenerateSeedsInput{
			BakeID:      "up",
			Split:       "public",
			NMLPs:       3,
			UploadedKey: b.InputSeeds("public"),
		},
	)
	if got, _ := f.st.Get(ctx, out.SeedsKey); string(got) != string(upload) {
		t.Errorf("canonical seeds file %q, want the upload's bytes %q", got, upload)
	}

	bad := []struct {
		name, data string
		n          int
	}{
		{"duplicate seeds", "[7, 7, 8]", 3},
		{"wrong count", "[1, 2]", 3},
		{"not JSON", "1 2 3", 3},
		{"negative seed", "[1, -2, 3]", 3},
		// Valid JSON, but more bytes than 3 seeds take: not read beyond
		// the bound, whoever put it in the bucket.
		{"oversized", "[1, 2, 3]" + strings.Repeat(" ", int(mlps.MaxSeedsFileBytes(3))), 3},
	}
	for i, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			split := fmt.Sprintf("bad-%d", i)
			key := b.InputSeeds(split)
			if err := f.st.Put(ctx, key, []byte(c.data)); err != nil {
				t.Fatal(err)
			}
			_, err := run[bakeapi.GenerateSeedsOutput](
				a,
				a.GenerateSeeds,
				bakeapi.GenerateSeedsInput{
					BakeID:      "up",
					Split:       split,
					NMLPs:       c.n,
					UploadedKey: key,
				},
			)
			wantAppError(t, err, bakeapi.ErrInvalidSeeds)
			if ok, _ := f.st.Exists(ctx, b.Seeds(split)); ok {
				t.Error("a bad seeds file became the split's seeds")
			}
		})
	}
}
