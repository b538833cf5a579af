package seeds

import "testing"

// Anchors from whestbench's tests
// (https://github.com/AIcrowd/whestbench/blob/main/tests/test_seeds.py) and
// from numpy's SeedSequence run outside this package, independent of it.

func TestEstimatorSeedAnchors(t *testing.T) {
	for _, c := range []struct {
		input uint64
		want  uint32
	}{
		{6717184059027789272, 2861657444}, // whestbench tests/test_seeds.py
		{42, 233227757}, {99, 4292511369}, {1000, 2822786858},
		{2000, 2573781011}, {2001, 1781000571},
		{1001, 3622263192}, {2002, 3259458125}, {3003, 4076086378}, {4004, 755867},
		{42000, 2176965858}, {42001, 1459250831}, {99000, 2556076278}, {99001, 4151336380},
	} {
		if got := DeriveV3(c.input).EstimatorSeed; got != c.want {
			t.Errorf("estimator seed of %d = %d, want %d", c.input, got, c.want)
		}
	}
}

func TestSampleStreamAnchors(t *testing.T) {
	for _, c := range []struct {
		input uint64
		want  uint32
	}{
		{1001, 3962977888}, {2002, 746300258}, {3003, 3515024991}, {4004, 1448555574},
		{42000, 318888643}, {42001, 3359384898}, {99000, 1708888334}, {99001, 2521294372},
	} {
		if got := DeriveV3(c.input).Sample.GenerateState32(1)[0]; got != c.want {
			t.Errorf("sample-stream generate_state(1)[0] of %d = %d, want %d", c.input, got, c.want)
		}
	}
}

func TestDeriveV2Anchors(t *testing.T) {
	for _, c := range []struct {
		root uint64
		want []uint32
	}{
		{1, []uint32{2749604155, 480482724, 2543531098, 1780620601}},  // multi_split public
		{2, []uint32{1311118443, 2895795964, 3039846940, 3051805348}}, // multi_split holdout
	} {
		for i, w := range c.want {
			if got := DeriveV2(c.root, i).EstimatorSeed; got != w {
				t.Errorf("root %d MLP %d: estimator seed %d, want %d", c.root, i, got, w)
			}
		}
	}
}

func TestDeriveV3SpawnKeys(t *testing.T) {
	s := DeriveV3(7)
	for i, ss := range []SeedSequence{s.Weight, s.Sample} {
		if k := ss.SpawnKey(); len(k) != 1 || k[0] != uint32(i) || ss.Entropy() != 7 {
			t.Errorf("stream %d: entropy %d spawn key %v", i, ss.Entropy(), k)
		}
	}
}
