package bakeapi

import (
	"strings"
	"testing"
	"time"
)

func recordInput() BakeInput {
	seed := uint64(31)
	return BakeInput{
		BakeParams: BakeParams{
			BakeID: "c7",
			Spec: Spec{
				Width:     8,
				Depth:     2,
				NSamples:  6_000_000,
				Sampler:   SamplerPhilox,
				ChunkSize: 256,
			},
		},
		Splits: []SplitSpec{
			{
				Name:   "public",
				Config: "default",
				NMLPs:  3,
				Seed:   &seed,
			},
			{
				Name:     "holdout",
				Config:   "default",
				NMLPs:    2,
				SeedsKey: "k",
			},
		},
	}
}

// The bug this exists for: a restart of bake c7 with n-samples halved must be
// told apart from the recorded bake, naming the key, before anything runs.
func TestRecordDiffNamesEveryDataDefiningChange(t *testing.T) {
	at := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	files := map[string]string{"holdout": "aa"}
	was := NewRecord(recordInput(), files, at)

	same := recordInput()
	same.Spec.ChunkSize = 4096 // scheduling only
	same.SliceSize = 7
	same.MaxInFlight = 9
	if d := was.Diff(NewRecord(same, files, at.Add(time.Hour))); len(d) != 0 {
		t.Fatalf("non-data-defining changes reported: %v", d)
	}

	changed := recordInput()
	changed.Spec.NSamples = 3_000_000
	changed.Splits[0].NMLPs = 4
	d := was.Diff(NewRecord(changed, map[string]string{"holdout": "bb"}, at))
	got := make([]string, len(d))
	for i, c := range d {
		got[i] = c.String()
	}
	want := []string{
		"n-samples: recorded 6000000, this config 3000000",
		"public.n-mlps: recorded 3, this config 4",
		"holdout.seeds: recorded file sha256:aa, this config file sha256:bb",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	v4 := recordInput()
	v4.Spec.SeedProtocol = SeedProtocolV4
	v4.Spec.Salt = Salt{SHA256: "cc"}
	if d := was.Diff(NewRecord(v4, files, at)); len(d) != 2 || d[0].Field != FieldSeedProtocol ||
		d[1].Field != "seed-salt sha256" {
		t.Fatalf("a change of seed protocol and salt: %v", d)
	}

	other := recordInput()
	other.Splits = other.Splits[:1]
	if d := was.Diff(NewRecord(other, files, at)); len(d) != 1 || d[0].Field != "splits" {
		t.Fatalf("a removed split: %v", d)
	}
}

func TestFingerprintIsPerSplitAndIgnoresScheduling(t *testing.T) {
	at := time.Now()
	a := NewRecord(recordInput(), nil, at)
	in := recordInput()
	in.Spec.ChunkSize = 0
	b := NewRecord(in, nil, at.Add(time.Minute))
	if a.Fingerprint("public") != b.Fingerprint("public") || len(a.Fingerprint("public")) != 64 {
		t.Fatal("chunk size or start time changed the fingerprint")
	}
	if a.Fingerprint("public") == a.Fingerprint("holdout") {
		t.Fatal("two splits share a fingerprint")
	}
	in.Spec.NSamples++
	if NewRecord(in, nil, at).Fingerprint("public") == a.Fingerprint("public") {
		t.Fatal("n-samples does not change the fingerprint")
	}
	if a.Fingerprint("nope") != "" {
		t.Fatal("a fingerprint for a split the record lacks")
	}
}
