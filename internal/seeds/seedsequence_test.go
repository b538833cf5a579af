package seeds

import (
	"slices"
	"testing"
)

func TestGenerateStateMatchesNumpy(t *testing.T) {
	v := loadVectors(t)
	if len(v.GenerateState) == 0 {
		t.Fatal("no generate_state vectors")
	}
	for _, c := range v.GenerateState {
		s := NewSeedSequence(c.Entropy, c.SpawnKey...)
		if got := s.GenerateState32(len(c.State32)); !slices.Equal(got, c.State32) {
			t.Errorf("SeedSequence(%d, spawn_key=%v).generate_state(%d) = %v, numpy %v",
				c.Entropy, c.SpawnKey, len(c.State32), got, c.State32)
		}
		if got := s.GenerateState64(len(c.State64)); !slices.Equal(got, c.State64) {
			t.Errorf("SeedSequence(%d, spawn_key=%v).generate_state(%d, uint64) = %v, numpy %v",
				c.Entropy, c.SpawnKey, len(c.State64), got, c.State64)
		}
	}
}

func TestSpawnExtendsKeyFromZero(t *testing.T) {
	parent := NewSeedSequence(99, 3)
	for round := 0; round < 2; round++ { // a second call numbers from 0 again
		kids := parent.Spawn(3)
		for i, k := range kids {
			want := NewSeedSequence(99, 3, uint32(i))
			if !slices.Equal(k.SpawnKey(), []uint32{3, uint32(i)}) || k.Entropy() != 99 {
				t.Fatalf("round %d child %d: key %v entropy %d",
					round, i, k.SpawnKey(), k.Entropy())
			}
			if !slices.Equal(k.GenerateState32(4), want.GenerateState32(4)) {
				t.Fatalf("round %d child %d differs from SeedSequence(99, spawn_key=(3,%d))",
					round, i, i)
			}
		}
	}
	if len(parent.Spawn(0)) != 0 {
		t.Fatal("Spawn(0) should be empty")
	}
}

func TestSeedSequenceKeyIsCopied(t *testing.T) {
	key := []uint32{1, 2}
	s := NewSeedSequence(5, key...)
	before := s.GenerateState32(4)
	key[0] = 77
	s.SpawnKey()[1] = 88
	if !slices.Equal(s.GenerateState32(4), before) || !slices.Equal(s.SpawnKey(), []uint32{1, 2}) {
		t.Fatal("SeedSequence shares its spawn key with the caller")
	}
}
