package activities_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/rows"
	"github.com/whestbake/whestbake/internal/seeds"
	"github.com/whestbake/whestbake/internal/store"
)

// testNameSplitProtocolV4: NameSplit refuses a worker without the bake's
// salt (InvalidConfig) and a changed seeds file (InvalidSeeds), writing
// nothing; with the salt it writes the split's salted identity blocks once,
// a second run leaving them byte for byte, and a slice then bakes from them
// alone (the seeds file gone) what a local 4.0 bake writes.
func testNameSplitProtocolV4(t *testing.T, f *fixture) {
	const saltHex = "6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b6b"
	salt, err := seeds.ParseSalt(saltHex)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a := f.acts(&countingEngine{})
	seed := uint64(13)
	sd := mustRun[bakeapi.GenerateSeedsOutput](
		t,
		a,
		a.GenerateSeeds,
		bakeapi.GenerateSeedsInput{
			BakeID:       "v4name",
			Split:        split,
			NMLPs:        4,
			Seed:         &seed,
			SeedProtocol: bakeapi.SeedProtocolV4,
		},
	)
	in := bakeapi.NameSplitInput{
		BakeID:      "v4name",
		Split:       split,
		NMLPs:       4,
		SeedsKey:    sd.SeedsKey,
		SeedsSHA256: sd.SHA256,
		Salt:        bakeapi.Salt{SHA256: salt.Digest(), Withhold: true, ID: "h1"},
	}
	block := keys.Bake("v4name").SaltedIdentityBlock(split, salt.Digest(), 0)

	for _, c := range []struct {
		salt func() (seeds.Salt, error)
		want string
	}{
		{nil, "WHEST_SEED_SALT is not set"},
		{withSalt(strings.Repeat("a5", 32)), "but the bake's salt has " + salt.Digest()},
	} {
		a.Salt = c.salt
		_, err := run[bakeapi.NameSplitOutput](a, a.NameSplit, in)
		app := wantAppError(t, err, bakeapi.ErrInvalidConfig)
		if !strings.Contains(app.Error(), c.want) {
			t.Errorf("NameSplit: %v, want %q", err, c.want)
		}
	}
	a.Salt = withSalt(saltHex)
	changed := in
	changed.SeedsSHA256 = "0000"
	_, err = run[bakeapi.NameSplitOutput](a, a.NameSplit, changed)
	wantAppError(t, err, bakeapi.ErrInvalidSeeds)
	if ok, _ := f.st.Exists(ctx, block); ok {
		t.Fatal("a failed NameSplit wrote an identity block")
	}

	out := mustRun[bakeapi.NameSplitOutput](t, a, a.NameSplit, in)
	if out.Blocks != 1 {
		t.Errorf("NameSplit wrote %d blocks, want 1", out.Blocks)
	}
	first, err := f.st.Get(ctx, block)
	if err != nil {
		t.Fatalf("NameSplit wrote no salted identity block: %v", err)
	}
	mustRun[bakeapi.NameSplitOutput](t, a, a.NameSplit, in) // a retry: every key is taken
	if again, err := f.st.Get(ctx, block); err != nil || !bytes.Equal(again, first) {
		t.Errorf("a second NameSplit changed the block (%v)", err)
	}

	seedsFile, err := f.st.Get(ctx, sd.SeedsKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.Delete(ctx, sd.SeedsKey); err != nil {
		t.Fatal(err)
	}
	sl := sliceInput("v4name", sd, 0, 1, 3)
	sl.Spec.SeedProtocol = bakeapi.SeedProtocolV4
	sl.Spec.Salt = in.Salt
	got := mustRun[bakeapi.BakeSliceOutput](t, a, a.BakeSlice, sl)
	if err := f.st.Put(ctx, sd.SeedsKey, seedsFile); err != nil {
		t.Fatal(err)
	}
	list, _ := seeds.GenerateInputSeeds(4, &seed)
	plan := rows.Plan{
		NMLPs:  4,
		Seeds:  mlps.FromSeeds(list),
		Range:  bakeapi.Range{Start: 1, End: 3},
		Spec:   sl.Spec,
		Split:  split,
		Config: "default",
		Salt:   salt,
	}
	local := filepath.Join(t.TempDir(), "local")
	bakeLocally(t, local, plan, list, salt)
	want, err := store.FileSHA256(filepath.Join(local, "data", "public-00000-of-00001.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if sum := parquetSHA(t, f.st, got.Prefix); sum != want {
		t.Errorf("slice of a named split: parquet %s, local 4.0 bake %s", sum, want)
	}
}
