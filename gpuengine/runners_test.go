package gpuengine

import (
	"errors"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
)

type fakeRunner struct {
	name  string
	freed *[]string
}

func (r fakeRunner) free() error {
	*r.freed = append(*r.freed, r.name)
	if r.name == "bad" {
		return errors.New("free failed")
	}
	return nil
}

// The cache holds at most max runners: a worker whose chunk size varies (each step
// a new pipeline shape) frees the least recently used instead of accumulating them.
func TestRunnerCacheFreesTheLeastRecentlyUsedBeyondItsBound(t *testing.T) {
	var freed []string
	c := newRunnerCache[fakeRunner](2)
	k := func(rows int) runnerKey { return runnerKey{width: 256, depth: 8, rows: rows} }
	for _, rows := range []int{1, 2} {
		if err := c.put(
			k(rows),
			fakeRunner{name: string(rune('a' + rows - 1)), freed: &freed},
		); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := c.get(k(1)); !ok { // a is now the most recent
		t.Fatal("a missing")
	}
	if err := c.put(k(3), fakeRunner{name: "c", freed: &freed}); err != nil {
		t.Fatal(err)
	}
	if len(freed) != 1 || freed[0] != "b" {
		t.Fatalf("freed %v, want [b]", freed)
	}
	if _, ok := c.get(k(2)); ok {
		t.Fatal("b still cached after it was freed")
	}
	if err := c.put(k(4), fakeRunner{name: "bad", freed: &freed}); err != nil {
		t.Fatal(err)
	}
	if err := c.close(); err == nil {
		t.Fatal("close must report a failed free")
	}
	if len(freed) != 4 || freed[1] != "a" {
		t.Fatalf("freed %v: every runner once, least recent first", freed)
	}
	if len(c.items) != 0 {
		t.Fatal("close left runners behind")
	}
}

// A network's tf32x3 runner is not its fp32 runner: the cache keeps them apart.
func TestRunnerCacheKeysByPrecision(t *testing.T) {
	var freed []string
	c := newRunnerCache[fakeRunner](2)
	fp32 := runnerKey{width: 256, depth: 8}
	tf32 := runnerKey{width: 256, depth: 8, precision: bakeapi.PrecisionTF32x3}
	for k, name := range map[runnerKey]string{fp32: "fp32", tf32: "tf32x3"} {
		if err := c.put(k, fakeRunner{name: name, freed: &freed}); err != nil {
			t.Fatal(err)
		}
	}
	for k, want := range map[runnerKey]string{fp32: "fp32", tf32: "tf32x3"} {
		if r, ok := c.get(k); !ok || r.name != want {
			t.Errorf("get(%+v) = %q, %v; want %q", k, r.name, ok, want)
		}
	}
}
