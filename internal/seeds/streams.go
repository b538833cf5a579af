package seeds

// Streams is what one MLP's input seed gives under a seed protocol: the
// weight stream, the sample stream, the estimator seed MLP.seed and the
// seed of the MLP's name.
type Streams struct {
	Weight, Sample SeedSequence
	EstimatorSeed  uint32
	// NameSeed is the estimator seed under protocols 2.0 and 3.0 and a
	// keyed digest of its own under 4.0, as whestbench's bake_seed_values.
	NameSeed int64
}

// DeriveV3 is whestbench's protocol 3.0: SeedSequence(inputSeed).spawn(3)
// gives the weight and sample streams and the estimator seed
// children[2].generate_state(1)[0].
func DeriveV3(inputSeed uint64) Streams {
	c := NewSeedSequence(inputSeed).Spawn(3)
	return streamsFrom(c[0], c[1], c[2])
}

// DeriveV2 is MLP i's streams under the legacy protocol 2.0:
// SeedSequence(rootSeed).spawn(3n), of which MLP i uses children 3i, 3i+1
// and 3i+2. A child's spawn key is its index alone, whatever n is, so one
// MLP's streams are derived without the others'.
func DeriveV2(rootSeed uint64, i int) Streams {
	child := func(k int) SeedSequence { return NewSeedSequence(rootSeed, uint32(k)) }
	return streamsFrom(child(3*i), child(3*i+1), child(3*i+2))
}

func streamsFrom(weight, sample, estimator SeedSequence) Streams {
	est := estimator.GenerateState32(1)[0]
	return Streams{
		Weight:        weight,
		Sample:        sample,
		EstimatorSeed: est,
		NameSeed:      int64(est),
	}
}
