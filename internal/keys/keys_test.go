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
		for _, k := range []string{b.Seeds(split), b.MLPResult(split, 3), b.MLPCheckpoint(split, 3), b.Slice(split, 2) + "/", b.Merged(split) + "/"} {
			if all[k] {
				t.Fatalf("key %s used twice", k)
			}
			all[k] = true
			if strings.HasPrefix(k, b.Dataset()+"/") || strings.HasPrefix(k, "bakes/b1/inputs/") {
				t.Fatalf("split key %s lies in a bake folder", k)
			}
		}
	}
	if Manifest("p") != "p/manifest.json" || Release("datasets", "demo", "v1") != "datasets/demo/v1" {
		t.Fatal("marker keys changed")
	}
	if got := ReleaseURI("releases", "datasets", "demo", "v1"); got != "s3://releases/datasets/demo/v1/" {
		t.Fatalf("release URI %s", got)
	}
}
