package bakeapi

import "regexp"

// SeedProtocol is whestbench's seed protocol, in
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/seeds.py:
// how an MLP's input seed becomes the participant-facing estimator seed and the
// seed of its name. Weights and statistics are the same under every protocol;
// the protocol changes the mlp_name column and the metadata.
type SeedProtocol string

const (
	// SeedProtocolV3 derives the estimator seed from the input seed's
	// SeedSequence and names the MLP after it: anyone can recompute both.
	SeedProtocolV3 SeedProtocol = "3.0"
	// SeedProtocolV4 derives both with BLAKE2b keyed by a salt. Without the
	// salt nobody can recompute them, so a split whose salt is withheld can
	// be published without its participant-facing seeds.
	SeedProtocolV4 SeedProtocol = "4.0"
	// seedProtocolV2 is whestbench's legacy protocol, which is only read.
	seedProtocolV2 SeedProtocol = "2.0"
)

// Salt declares protocol 4.0's salt. It never holds the salt itself, only
// what the metadata records about it, so it can travel in workflow inputs and
// be printed: whoever derives seeds brings the salt and checks it against
// SHA256.
type Salt struct {
	// SHA256 is the lowercase hex SHA-256 of the salt's bytes, the metadata's
	// salt_digest.
	SHA256 string
	// Withhold keeps the salt out of the metadata, with salt_source "env":
	// readers must be given it in WHEST_SEED_SALT.
	Withhold bool `json:",omitempty"`
	// ID names the salt for its holders as salt_id; required with Withhold.
	ID string `json:",omitempty"`
}

// Field names of the seed protocol, as FieldError reports them.
const (
	FieldSeedProtocol = "seed-protocol"
	FieldSeedSalt     = "seed-salt"
	FieldWithholdSalt = "withhold-salt"
	FieldSaltID       = "salt-id"
)

var (
	sha256HexRE = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// saltIDRE keeps an ID printable in the dataset card and in commands.
	saltIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`)
)

// Protocol is s's seed protocol; a Spec without one is protocol 3.0, as
// every bake recorded without the field is.
func (s Spec) Protocol() SeedProtocol {
	if s.SeedProtocol == "" {
		return SeedProtocolV3
	}
	return s.SeedProtocol
}

// validateSeeding adds the seed protocol's field errors to errs.
func (s Spec) validateSeeding(errs *FieldErrors) {
	salt := s.Salt
	switch s.Protocol() {
	case SeedProtocolV3:
		// whestbench: "seed_salt is only meaningful for seed_protocol 4.0".
		for _, f := range []struct {
			field string
			set   bool
		}{
			{FieldSeedSalt, salt.SHA256 != ""},
			{FieldWithholdSalt, salt.Withhold},
			{FieldSaltID, salt.ID != ""},
		} {
			if f.set {
				errs.add(
					f.field,
					"is only meaningful for seed protocol 4.0: remove it, or choose protocol 4.0",
				)
			}
		}
		return
	case SeedProtocolV4:
	case seedProtocolV2:
		errs.add(
			FieldSeedProtocol,
			"2.0 is whestbench's legacy protocol, which is read but never baked: "+
				"use 3.0 (the default) or 4.0",
		)
		return
	default:
		errs.add(
			FieldSeedProtocol,
			"%q is unknown: use 3.0 (the default) or 4.0 (seeds and names keyed by a salt); "+
				"quote it in YAML, which reads 4.0 as the number 4",
			s.SeedProtocol,
		)
		return
	}
	if !sha256HexRE.MatchString(salt.SHA256) {
		errs.add(
			FieldSeedSalt,
			"is missing: seed protocol 4.0 derives seeds and names from a salt, "+
				"recorded by its SHA-256 (got %q)",
			salt.SHA256,
		)
	}
	switch {
	case salt.ID != "" && !saltIDRE.MatchString(salt.ID):
		errs.add(
			FieldSaltID,
			"%q: use at most 128 letters, digits, '.', '_', ':' and '-', "+
				"starting with a letter or digit",
			salt.ID,
		)
	case salt.Withhold && salt.ID == "":
		errs.add(
			FieldSaltID,
			"is required when the salt is withheld: "+
				"the dataset then records only the salt's SHA-256, "+
				"and the ID tells its holders which salt to supply",
		)
	}
}
