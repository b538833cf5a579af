package keys

import (
	"strings"
	"testing"
)

func TestKeysAreDeterministicAndDisjoint(t *testing.T) {
	b := Bake("b1")
	// Split names that look like the bake's own folders must not collide with them.
	all := map[string]bool{}
	for _, split := range []string{"dataset", "inputs", "public"} {
		for _, k := range []string{
			b.Seeds(split),
			b.MLPResult(split, 3),
			b.MLPCheckpoint(split, 3),
			b.Slice(split, 2) + "/",
			b.Merged(split) + "/",
		} {
			if all[k] {
				t.Fatalf("key %s used twice", k)
			}
			all[k] = true
			if strings.HasPrefix(k, b.Dataset()+"/") || strings.HasPrefix(k, "bakes/b1/inputs/") {
				t.Fatalf("split key %s lies in a bake folder", k)
			}
		}
	}
	if Manifest("p") != "p/manifest.json" ||
		Release("datasets", "demo", "v1") != "datasets/demo/v1" {
		t.Fatal("marker keys changed")
	}
	got := ReleaseURI("releases", "datasets", "demo", "v1")
	if got != "s3://releases/datasets/demo/v1/" {
		t.Fatalf("release URI %s", got)
	}
}

// Intermediates are what the slices, merges and combine leave for the next
// step; the record, seeds files and final dataset are the bake's own.
func TestIntermediates(t *testing.T) {
	b := Bake("b1")
	inter := []string{
		b.IdentityBlock("public", 0),
		b.SaltedIdentityBlock("public", strings.Repeat("ab", 32), 0),
		b.IdentitiesDone("public"),
		b.MLPResult("public", 3),
		b.MLPCheckpoint("public", 3),
		Manifest(b.Slice("public", 2)),
		b.Merged("public") + "/data/public-00000-of-00001.parquet",
	}
	kept := []string{
		b.Record(),
		b.InputSeeds("public"),
		b.Seeds("public"),
		Manifest(b.Dataset()),
		b.Dataset() + "/metadata.json",
		b.PreparedCheck(strings.Repeat("cd", 32)),
		Bake("b10").MLPResult("public", 3),
		b.Seeds("seeds.json"),
	}
	for _, k := range inter {
		if !b.Intermediate(k) {
			t.Errorf("%s is not an intermediate", k)
		}
	}
	for _, k := range kept {
		if b.Intermediate(k) {
			t.Errorf("%s is an intermediate", k)
		}
	}
	for _, f := range append(b.SliceState("public"), b.Slices("public"), b.Prefix()) {
		if !strings.HasSuffix(f, "/") {
			t.Errorf("folder %s does not end in /", f)
		}
	}
	salted := b.SaltedIdentityBlock("public", strings.Repeat("ab", 32), 0)
	if !strings.HasPrefix(salted, b.SliceState("public")[0]) ||
		!strings.HasPrefix(b.MLPResult("public", 3), b.SliceState("public")[1]) ||
		!strings.HasPrefix(Manifest(b.Slice("public", 2)), b.Slices("public")) {
		t.Error("folders do not hold their keys")
	}
}

// The commit markers are every directory's manifest and a split's
// identities done.json, and nothing else a bake writes.
func TestMarkers(t *testing.T) {
	b := Bake("b1")
	markers := []string{
		Manifest(b.Slice("public", 2)),
		Manifest(b.Merged("public")),
		Manifest(b.Dataset()),
		b.IdentitiesDone("public"),
	}
	others := []string{
		b.Record(),
		b.StartedIn(),
		b.InputSeeds("public"),
		b.Seeds("public"),
		b.IdentityBlock("public", 0),
		b.SaltedIdentityBlock("public", strings.Repeat("ab", 32), 0),
		b.MLPResult("public", 3),
		b.MLPCheckpoint("public", 3),
		b.Dataset() + "/metadata.json",
		b.PreparedCheck(strings.Repeat("cd", 32)),
		b.Slice("public", 2) + "/data/public-00000-of-00001.parquet",
	}
	for _, k := range markers {
		if !Marker(k) {
			t.Errorf("%s is not a commit marker", k)
		}
	}
	for _, k := range others {
		if Marker(k) {
			t.Errorf("%s is taken for a commit marker", k)
		}
	}
}

func TestMergedSplitInvertsMerged(t *testing.T) {
	b := Bake("b1")
	for _, split := range []string{"public", "merged", "splits"} {
		if got, ok := b.MergedSplit(b.Merged(split)); !ok || got != split {
			t.Errorf("MergedSplit(%s) = %q, %v", b.Merged(split), got, ok)
		}
	}
	for _, p := range []string{b.Dataset(), Bake("b2").Merged("public"), b.Slice("public", 1),
		b.Merged("public") + "/"} {
		if got, ok := b.MergedSplit(p); ok {
			t.Errorf("MergedSplit(%s) = %q, want none", p, got)
		}
	}
}
