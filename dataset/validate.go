package dataset

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// seedColumnIsCanonical ends the errors of metadata that records a seed the
// parquet files already hold, as whestbench's do.
const seedColumnIsCanonical = "the parquet mlp_seed column is the canonical per-MLP seed record."

var knownSeedProtocols = map[string]string{
	SeedProtocolV2Name: SeedProtocolV2Version,
	SeedProtocolV3Name: SeedProtocolV3Version,
	SeedProtocolV4Name: SeedProtocolV4Version,
}

// Validate applies whestbench's validate_metadata rules, from
// https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py,
// to md. A partial dataset is refused unless allowPartial is set. Fields the
// reference leaves unchecked, such as provenance, hardware, width and depth,
// are left unchecked here too; ReadDir cross-checks the ones the parquet files
// can contradict.
func Validate(md Metadata, allowPartial bool) error {
	if md == nil {
		return invalidf("metadata is empty; a dataset's metadata.json must be a JSON object")
	}
	sv, ok := md.Get("schema_version")
	if !ok {
		return invalidf("metadata is missing 'schema_version'. " +
			"If this is a legacy .npz dataset, re-bake it with `whestbake dataset bake`.")
	}
	if s, _ := sv.(string); s != SchemaVersion {
		return invalidf("schema_version is %s, this tool requires %q. "+
			"Re-bake with `whestbake dataset bake`.", pyjson.Compact(sv), SchemaVersion)
	}
	proto, _ := md.GetObject("seed_protocol")
	name, _ := proto.GetString("name")
	version, _ := proto.GetString("version")
	if want, ok := knownSeedProtocols[name]; !ok || !proto.Has("version") || want != version {
		rawName, _ := proto.Get("name")
		rawVersion, _ := proto.Get("version")
		return invalidf("unknown seed_protocol name=%s / version=%s. Known protocols: %s",
			pyjson.Compact(rawName), pyjson.Compact(rawVersion), knownProtocolList())
	}
	if name == SeedProtocolV4Name {
		if err := validateSaltDeclaration(proto); err != nil {
			return err
		}
	}
	if v, ok := md.Get("split"); ok {
		s, isStr := v.(string)
		if !isStr {
			return invalidf("'split' must be a string; got %s.", pyjson.Kind(v))
		}
		if err := checkName("split name", s); err != nil {
			return invalidf("invalid split metadata field: %v", err)
		}
	}
	if v, ok := md.Get("config"); ok {
		s, isStr := v.(string)
		if !isStr {
			return invalidf("'config' must be a string; got %s.", pyjson.Kind(v))
		}
		if err := checkName("config name", s); err != nil {
			return invalidf("%v", err)
		}
	}
	// Seeds live in the parquet mlp_seed column for 3.0 and 4.0; only 2.0
	// keeps a root seed in metadata.
	explicitSeeds := name != SeedProtocolV2Name
	label := "seed_protocol " + version
	if md.Has("splits") {
		return validateMultiSplit(md, explicitSeeds, label)
	}
	if !md.Has("n_mlps") {
		return invalidf("single-split metadata missing required field 'n_mlps'.")
	}
	switch {
	case explicitSeeds && md.Has("seed"):
		return invalidf("%s: single-split metadata must not have a top-level 'seed' field; "+
			seedColumnIsCanonical, label)
	case !explicitSeeds && !md.Has("seed"):
		return invalidf("seed_protocol 2.0: " +
			"single-split metadata missing required top-level 'seed' field.")
	}
	if md.Truthy("is_partial") && !allowPartial {
		r, _ := md.Get("mlp_range")
		total, _ := md.Get("total_n_mlps")
		return invalidf("this is a partial dataset (mlp_range=%s, total_n_mlps=%s). "+
			"Run `whestbake dataset merge <partials> --output <dir>` first.",
			pyjson.Compact(r), pyjson.Compact(total))
	}
	return nil
}

func validateMultiSplit(md Metadata, explicitSeeds bool, label string) error {
	splits, ok := md.GetObject("splits")
	if !ok || splits.Len() == 0 {
		return invalidf("multi-split metadata requires 'splits' " +
			"to be a non-empty object with at least one entry.")
	}
	names := splits.Keys()
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	if md.Truthy("is_partial") {
		return invalidf("multi-split datasets cannot also be partial; " +
			"got is_partial=true alongside a 'splits' object. " +
			"Partials are always single-split: merge each split's partials first, " +
			"then combine them with `whestbake dataset combine-splits`.")
	}
	if md.Has("n_mlps") {
		return invalidf("multi-split metadata must not have top-level 'n_mlps'; " +
			"per-split n_mlps live under splits[<name>].")
	}
	if v, ok := md.Get("default_split"); ok {
		s, isStr := v.(string)
		if !isStr {
			return invalidf("'default_split' must be a string; got %s.", pyjson.Kind(v))
		}
		if !splits.Has(s) {
			return invalidf("'default_split'=%q is not one of the dataset's splits %q.", s, sorted)
		}
	}
	if err := validatePreparedSplits(md, splits, sorted); err != nil {
		return err
	}
	if md.Has("seed") {
		if explicitSeeds {
			return invalidf("%s: multi-split metadata must not have a top-level 'seed' field; "+
				seedColumnIsCanonical, label)
		}
		return invalidf("multi-split metadata must not have top-level 'seed'; " +
			"per-split seed lives under splits[<name>].")
	}
	for _, s := range names {
		if err := validateSplitEntry(splits, s, explicitSeeds, label); err != nil {
			return err
		}
	}
	return nil
}

// validatePreparedSplits checks md's prepared_splits block, if any: an
// object whose entries are objects naming splits of splits by path, with an
// optional format. The splits are sorted for the message.
func validatePreparedSplits(md Metadata, splits *Object, sorted []string) error {
	v, ok := md.Get("prepared_splits")
	if !ok {
		return nil
	}
	prep, isObj := v.(*Object)
	if !isObj {
		return invalidf("'prepared_splits' must be an object; got %s.", pyjson.Kind(v))
	}
	for _, s := range prep.Keys() {
		if !splits.Has(s) {
			return invalidf("'prepared_splits[%q]' references a split that isn't in this dataset "+
				"(have: %q).", s, sorted)
		}
		entry, isObj := prep.GetObject(s)
		if !isObj {
			return invalidf("'prepared_splits[%q]' must be an object.", s)
		}
		if _, ok := entry.GetString("path"); !ok {
			return invalidf("'prepared_splits[%q].path' must be a string.", s)
		}
		if f, ok := entry.Get("format"); ok && f != nil {
			if _, isStr := f.(string); !isStr {
				return invalidf("'prepared_splits[%q].format' must be a string if present.", s)
			}
		}
	}
	return nil
}

// validateSplitEntry checks splits[s]: its name, its n_mlps and config, and
// that it has a seed exactly when the protocol keeps seeds in metadata.
func validateSplitEntry(splits *Object, s string, explicitSeeds bool, label string) error {
	if err := checkName("split name", s); err != nil {
		return invalidf("invalid split name in splits object: %v", err)
	}
	info, isObj := splits.GetObject(s)
	if !isObj {
		v, _ := splits.Get(s)
		return invalidf("splits[%q] must be an object; got %s.", s, pyjson.Kind(v))
	}
	if !info.Has("n_mlps") {
		return invalidf("splits[%q] is missing required field 'n_mlps'.", s)
	}
	if v, ok := info.Get("config"); ok {
		c, isStr := v.(string)
		if !isStr {
			return invalidf("splits[%q].config must be a string; got %s.", s, pyjson.Kind(v))
		}
		if err := checkName("config name", c); err != nil {
			return invalidf("invalid config in splits[%q]: %v", s, err)
		}
	}
	switch {
	case explicitSeeds && info.Has("seed"):
		return invalidf("%s: splits[%q] must not have a 'seed' field; "+seedColumnIsCanonical,
			label, s)
	case !explicitSeeds && !info.Has("seed"):
		return invalidf("splits[%q] is missing required field 'seed'.", s)
	}
	return nil
}

// validateSaltDeclaration checks how a 4.0 dataset declares its salt; the
// salt itself is resolved by whoever derives seeds.
func validateSaltDeclaration(proto *Object) error {
	source := SaltSourceMetadata
	if v, ok := proto.Get("salt_source"); ok {
		s, _ := v.(string)
		if s != SaltSourceMetadata && s != SaltSourceEnv {
			return invalidf("seed_protocol 4.0: salt_source must be 'metadata' or 'env'; got %s.",
				pyjson.Compact(v))
		}
		source = s
	}
	if source == SaltSourceMetadata {
		raw, _ := proto.Get("salt")
		if !proto.Truthy("salt") {
			return invalidf("seed_protocol 4.0: metadata is missing the 'salt' field. " +
				"The participant-facing seeds and MLP names cannot be derived without it.")
		}
		s, isStr := raw.(string)
		if !isStr {
			return invalidf("seed_protocol 4.0: 'salt' must be a hex string; got %s.",
				pyjson.Kind(raw))
		}
		if _, err := hex.DecodeString(s); err != nil {
			return invalidf("seed_protocol 4.0: 'salt' is not valid hex: %v", err)
		}
	} else if proto.Has("salt") {
		return invalidf("seed_protocol 4.0: " +
			"salt_source='env' but a 'salt' field is also present. " +
			"Remove the field: shipping the salt defeats the point of withholding it.")
	}
	if d, ok := proto.Get("salt_digest"); ok && d != nil {
		if _, isStr := d.(string); !isStr {
			return invalidf("seed_protocol 4.0: 'salt_digest' must be a string; got %s.",
				pyjson.Kind(d))
		}
	}
	if source == SaltSourceEnv && !proto.Truthy("salt_digest") {
		return invalidf("seed_protocol 4.0: salt_source='env' requires 'salt_digest' " +
			"so a wrong salt is caught immediately instead of silently deriving " +
			"different seeds and MLP names than the dataset was baked with.")
	}
	return nil
}

func knownProtocolList() string {
	var parts []string
	for n, v := range knownSeedProtocols {
		parts = append(parts, fmt.Sprintf("%q@%q", n, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}

// shownValue renders the value v of a top-level metadata key for an error
// message, as pyjson.Compact does, except that a seed_protocol block shows a
// published salt by its SHA-256: error messages end up in logs, and the salt
// belongs in the metadata only.
func shownValue(key string, v any) string {
	proto, ok := v.(*Object)
	salt, hasSalt := proto.GetString("salt")
	if key != "seed_protocol" || !ok || !hasSalt {
		return pyjson.Compact(v)
	}
	raw, err := hex.DecodeString(salt)
	if err != nil {
		raw = []byte(salt)
	}
	sum := sha256.Sum256(raw)
	c := proto.Clone()
	c.Set("salt", "<salt with sha256 "+hex.EncodeToString(sum[:])+">")
	return pyjson.Compact(c)
}
