package bakeapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"
)

// Record is what defines a bake's bits. The starter writes it create-only at
// the bake's first start; every later start, reattach or restart of the same
// bake ID compares its config with the record and refuses any difference
// before anything runs, so a bake can never mix results of two specs.
type Record struct {
	BakeID string
	// CreatedAt is the bake's recorded start; every timestamp in its
	// datasets derives from it, so the bake's bytes do not depend on when or
	// how often an activity ran.
	CreatedAt    time.Time
	Spec         Spec
	Algorithm    string
	Splits       []SplitRecord
	DefaultSplit string `json:",omitempty"`
}

// SplitRecord is what defines a split's MLPs: its identity, size and where
// its seeds come from.
type SplitRecord struct {
	Name, Config string
	NMLPs        int
	// Seeds is the split's seed source: "file sha256:<hex>" for a user's
	// file, "root seed <n>" for a reproducible list, "entropy" for a list
	// drawn once from the OS and stored by the bake.
	Seeds string
}

// NewRecord is the record of a bake about to start at createdAt. fileSHA256
// gives the sha256 of each split's user seeds file, by split name.
func NewRecord(in BakeInput, fileSHA256 map[string]string, createdAt time.Time) Record {
	spec := in.Spec
	spec.ChunkSize = 0 // scheduling only: never changes a bit
	r := Record{
		BakeID:       in.BakeID,
		CreatedAt:    createdAt.UTC(),
		Spec:         spec,
		Algorithm:    spec.Algorithm(),
		DefaultSplit: in.DefaultSplit,
	}
	for _, s := range in.Splits {
		src := "entropy"
		switch {
		case s.SeedsKey != "":
			src = "file sha256:" + fileSHA256[s.Name]
		case s.Seed != nil:
			src = fmt.Sprintf("root seed %d", *s.Seed)
		}
		r.Splits = append(
			r.Splits,
			SplitRecord{
				Name:   s.Name,
				Config: s.Config,
				NMLPs:  s.NMLPs,
				Seeds:  src,
			},
		)
	}
	return r
}

// Change is one difference between a bake's record and a new start of it.
type Change struct {
	// Field is a Spec field name, "algorithm", "default-split", "splits",
	// or "<split>.<field>".
	Field                string
	Recorded, ThisConfig string
}

func (c Change) String() string {
	return fmt.Sprintf("%s: recorded %s, this config %s", c.Field, c.Recorded, c.ThisConfig)
}

// Diff lists every data-defining difference between r and o. The bake ID and
// CreatedAt are not data-defining.
func (r Record) Diff(o Record) []Change {
	var out []Change
	add := func(field string, a, b any) {
		if fmt.Sprint(a) != fmt.Sprint(b) {
			out = append(
				out,
				Change{
					Field:      field,
					Recorded:   fmt.Sprintf("%v", a),
					ThisConfig: fmt.Sprintf("%v", b),
				},
			)
		}
	}
	add(FieldWidth, r.Spec.Width, o.Spec.Width)
	add(FieldDepth, r.Spec.Depth, o.Spec.Depth)
	add(FieldNSamples, r.Spec.NSamples, o.Spec.NSamples)
	add(FieldSampler, r.Spec.Sampler, o.Spec.Sampler)
	add(FieldDotProduct, quoted(string(r.Spec.Dot)), quoted(string(o.Spec.Dot)))
	add(FieldPrecision, quoted(string(r.Spec.Precision)), quoted(string(o.Spec.Precision)))
	add(FieldSeedProtocol, quoted(string(r.Spec.SeedProtocol)), quoted(string(o.Spec.SeedProtocol)))
	add(FieldSeedSalt+" sha256", quoted(r.Spec.Salt.SHA256), quoted(o.Spec.Salt.SHA256))
	add(FieldWithholdSalt, r.Spec.Salt.Withhold, o.Spec.Salt.Withhold)
	add(FieldSaltID, quoted(r.Spec.Salt.ID), quoted(o.Spec.Salt.ID))
	add("algorithm", r.Algorithm, o.Algorithm)
	add("default-split", quoted(r.DefaultSplit), quoted(o.DefaultSplit))
	names := func(ss []SplitRecord) []string {
		var n []string
		for _, s := range ss {
			n = append(n, s.Name)
		}
		return n
	}
	if fmt.Sprint(names(r.Splits)) != fmt.Sprint(names(o.Splits)) {
		add("splits", names(r.Splits), names(o.Splits))
		return out
	}
	for i, a := range r.Splits {
		b := o.Splits[i]
		add(a.Name+"."+FieldConfig, a.Config, b.Config)
		add(a.Name+"."+FieldNMLPs, a.NMLPs, b.NMLPs)
		add(a.Name+".seeds", a.Seeds, b.Seeds)
	}
	return out
}

func quoted(s string) string { return fmt.Sprintf("%q", s) }

// Fingerprint identifies split's data-defining spec: every per-MLP result and
// checkpoint of the split carries it and is reused only on an exact match.
// It is "" for a split the record does not have.
func (r Record) Fingerprint(split string) string {
	for _, s := range r.Splits {
		if s.Name != split {
			continue
		}
		data, _ := json.Marshal(struct {
			Spec      Spec
			Algorithm string
			Split     SplitRecord
		}{r.Spec, r.Algorithm, s})
		sum := sha256.Sum256(data)
		return hex.EncodeToString(sum[:])
	}
	return ""
}
