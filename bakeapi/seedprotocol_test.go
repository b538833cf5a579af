package bakeapi

import (
	"encoding/json"
	"strings"
	"testing"
)

const digest = "3f0b6a9d6e0f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70819a0b"

func fields(err error) map[string]string {
	out := map[string]string{}
	for _, f := range AsFieldErrors(err) {
		out[f.Field] = f.Problem
	}
	return out
}

func TestSeedProtocolValidation(t *testing.T) {
	base := Spec{
		Width:    4,
		Depth:    2,
		NSamples: 10,
		Sampler:  SamplerPhilox,
	}
	with := func(p SeedProtocol, s Salt) Spec {
		b := base
		b.SeedProtocol = p
		b.Salt = s
		return b
	}
	for _, c := range []struct {
		name string
		spec Spec
		want []string // fields with errors
	}{
		{"default is 3.0", base, nil},
		{"explicit 3.0", with(SeedProtocolV3, Salt{}), nil},
		{"4.0 published", with(SeedProtocolV4, Salt{SHA256: digest}), nil},
		{
			"4.0 withheld",
			with(SeedProtocolV4, Salt{SHA256: digest, Withhold: true, ID: "holdout-2026"}),
			nil,
		},
		{"4.0 without a salt", with(SeedProtocolV4, Salt{}), []string{FieldSeedSalt}},
		{
			"4.0 upper-case digest",
			with(SeedProtocolV4, Salt{SHA256: strings.ToUpper(digest)}),
			[]string{FieldSeedSalt},
		},
		{
			"withheld without an ID",
			with(SeedProtocolV4, Salt{SHA256: digest, Withhold: true}),
			[]string{FieldSaltID},
		},
		{
			"unprintable ID",
			with(SeedProtocolV4, Salt{SHA256: digest, ID: "a`b"}),
			[]string{FieldSaltID},
		},
		{
			"salt under 3.0",
			with(SeedProtocolV3, Salt{SHA256: digest, Withhold: true, ID: "x"}),
			[]string{FieldSeedSalt, FieldWithholdSalt, FieldSaltID},
		},
		{"2.0 is read-only", with("2.0", Salt{}), []string{FieldSeedProtocol}},
		{"unknown", with("4", Salt{}), []string{FieldSeedProtocol}},
	} {
		got := fields(c.spec.Validate())
		if len(got) != len(c.want) {
			t.Errorf("%s: errors %v, want fields %v", c.name, got, c.want)
			continue
		}
		for _, f := range c.want {
			if _, ok := got[f]; !ok {
				t.Errorf("%s: no error for %s in %v", c.name, f, got)
			}
		}
	}
}

// Workflow inputs recorded before protocol 4.0 have no seed fields, and a
// 3.0 Spec still encodes without them.
func TestSpecJSONWithoutSeedProtocol(t *testing.T) {
	old := Spec{
		Width:    4,
		Depth:    2,
		NSamples: 10,
		Sampler:  SamplerPhilox,
	}
	b, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != `{"Width":4,"Depth":2,"NSamples":10,"Sampler":"philox"}` {
		t.Errorf("3.0 spec encodes as %s", got)
	}
	var back Spec
	if err := json.Unmarshal(b, &back); err != nil || back != old ||
		back.Protocol() != SeedProtocolV3 {
		t.Errorf("decoded %+v, %v", back, err)
	}
	v4 := old
	v4.SeedProtocol = SeedProtocolV4
	v4.Salt = Salt{SHA256: digest, Withhold: true, ID: "h1"}
	b, _ = json.Marshal(v4)
	back = Spec{}
	if err := json.Unmarshal(b, &back); err != nil || back != v4 {
		t.Errorf("4.0 round trip: %s → %+v, %v", b, back, err)
	}
}
