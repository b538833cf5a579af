package dataset

import (
	"testing"

	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// Rules and messages from whestbench's validate_metadata and its tests
// (https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/dataset_io.py
// and tests/test_dataset_io_schema.py).

func TestSplitAndConfigNames(t *testing.T) {
	md := func(key, name string) Metadata {
		return mustObj(t, `{`+v3Meta+`, "n_mlps": 4, "`+key+`": "`+name+`"}`)
	}
	for _, ok := range []string{"public", "holdout", "my-custom-split", "a", "split2", "a-1-b"} {
		if err := Validate(md("split", ok), false); err != nil {
			t.Errorf("split %q refused: %v", ok, err)
		}
		if err := Validate(md("config", ok), false); err != nil {
			t.Errorf("config %q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{
		"", "Public", "my_split", "1split", "split name", "split!", "trailing-",
		"double--hyphen", "123", "-lead",
	} {
		err := Validate(md("split", bad), false)
		schematest.WantErr[*InvalidDatasetError](t, err, "split name")
	}
	for _, bad := range []string{"", "Full", "my_config", "1-config", "config--x"} {
		err := Validate(md("config", bad), false)
		schematest.WantErr[*InvalidDatasetError](t, err, "config name")
	}
}

func mustObj(t *testing.T, s string) Metadata {
	t.Helper()
	var o Object
	if err := o.UnmarshalJSON([]byte(s)); err != nil {
		t.Fatal(err)
	}
	return &o
}

// The start of metadata.json of each seed protocol: schema_version and
// seed_protocol (v4Meta leaves seed_protocol open for the salt's fields).
const (
	v3Meta = `"schema_version": "3.0", ` +
		`"seed_protocol": {"name": "whestbench_explicit_per_mlp_seeds", "version": "3.0"}`
	v2Meta = `"schema_version": "3.0", ` +
		`"seed_protocol": {"name": "whestbench_seedsequence_hierarchy", "version": "2.0", ` +
		`"seeded": true}`
	v4Meta = `"schema_version": "3.0", ` +
		`"seed_protocol": {"name": "whestbench_kdf_per_mlp_seeds", "version": "4.0"`
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		md      string
		partial bool
		err     string // "" = valid
	}{
		{`{` + v3Meta + `, "n_mlps": 4}`, false, ""},
		{`{"n_mlps": 4}`, false, "missing 'schema_version'"},
		{`{"schema_version": "2.4", "n_mlps": 4}`, false, "schema_version is \"2.4\""},
		{`{"schema_version": "3.0", ` +
			`"seed_protocol": {"name": "whestbench_explicit_per_mlp_seeds", "version": "2.0"}, ` +
			`"n_mlps": 4}`,
			false, "unknown seed_protocol"},
		{`{"schema_version": "3.0", "n_mlps": 4}`, false, "unknown seed_protocol name=null"},
		{`{` + v3Meta + `}`, false, "missing required field 'n_mlps'"},
		{`{` + v3Meta + `, "n_mlps": 4, "seed": 1}`, false, "must not have a top-level 'seed'"},
		{`{` + v2Meta + `, "n_mlps": 4}`, false, "missing required top-level 'seed'"},
		{`{` + v2Meta + `, "n_mlps": 4, "seed": 1}`, false, ""},
		{`{` + v3Meta + `, "n_mlps": 4, "split": "Bad_Split"}`,
			false, "invalid split metadata field"},
		{`{` + v3Meta + `, "n_mlps": 4, "split": 3}`, false, "'split' must be a string"},
		{`{` + v3Meta + `, "n_mlps": 4, "config": "Full"}`,
			false, "config name \"Full\" does not match"},
		{`{` + v3Meta + `, "n_mlps": 4, "is_partial": true, ` +
			`"mlp_range": [0, 4], "total_n_mlps": 8}`,
			false, "this is a partial dataset (mlp_range=[0, 4], total_n_mlps=8). " +
				"Run `whestbake dataset merge <partials> --output <dir>` first."},
		{`{` + v3Meta + `, "n_mlps": 4, "is_partial": true, ` +
			`"mlp_range": [0, 4], "total_n_mlps": 8}`,
			true, ""},
		{`{` + v3Meta + `, "n_mlps": 4, "is_partial": false}`, false, ""},
		// Multi-split.
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}, ` +
			`"holdout": {"n_mlps": 3, "config": "holdout"}}, "default_split": "public"}`,
			false, ""},
		{`{` + v3Meta + `, "splits": null}`, false, "non-empty object"},
		{`{` + v3Meta + `, "splits": {}}`, false, "non-empty object"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, "n_mlps": 2}`,
			false, "must not have top-level 'n_mlps'"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, "seed": 1}`,
			false, "must not have a top-level 'seed'"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2, "seed": 1}}}`,
			false, "must not have a 'seed'"},
		{`{` + v3Meta + `, "splits": {"public": {}}}`, false, "missing required field 'n_mlps'"},
		{`{` + v3Meta + `, "splits": {"Public": {"n_mlps": 2}}}`, false, "invalid split name"},
		{`{` + v3Meta + `, "splits": {"public": 3}}`, false, "must be an object"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2, "config": 7}}}`,
			false, "config must be a string"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, "is_partial": true}`,
			true, "cannot also be partial"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, "default_split": "holdout"}`,
			false, "'default_split'=\"holdout\" is not one of"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, "default_split": 1}`,
			false, "'default_split' must be a string"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, ` +
			`"prepared_splits": {"public": {"path": "prepared/public"}}}`,
			false, ""},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, ` +
			`"prepared_splits": {"holdout": {"path": "x"}}}`,
			false, "isn't in this dataset"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, ` +
			`"prepared_splits": {"public": {"path": 1}}}`,
			false, "path' must be a string"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, ` +
			`"prepared_splits": {"public": {"path": "p", "format": 2}}}`,
			false, "format' must be a string"},
		{`{` + v3Meta + `, "splits": {"public": {"n_mlps": 2}}, "prepared_splits": []}`,
			false, "'prepared_splits' must be an object"},
		{`{` + v2Meta + `, "splits": {"public": {"n_mlps": 2, "seed": 1}}}`, false, ""},
		{`{` + v2Meta + `, "splits": {"public": {"n_mlps": 2}}}`,
			false, "missing required field 'seed'"},
		{`{` + v2Meta + `, "splits": {"public": {"n_mlps": 2, "seed": 1}}, "seed": 1}`,
			false, "per-split seed lives under"},
		// Protocol 4.0 salt declarations.
		{`{` + v4Meta + `, "salt": "00ff"}, "n_mlps": 1}`, false, ""},
		{`{` + v4Meta + `}, "n_mlps": 1}`, false, "missing the 'salt' field"},
		{`{` + v4Meta + `, "salt": "zz"}, "n_mlps": 1}`, false, "not valid hex"},
		{`{` + v4Meta + `, "salt": 5}, "n_mlps": 1}`, false, "must be a hex string"},
		{`{` + v4Meta + `, "salt_source": "env", "salt_digest": "abc"}, "n_mlps": 1}`, false, ""},
		{`{` + v4Meta + `, "salt_source": "env", "salt": "00", "salt_digest": "abc"}, "n_mlps": 1}`,
			false, "also present"},
		{`{` + v4Meta + `, "salt_source": "env"}, "n_mlps": 1}`, false, "requires 'salt_digest'"},
		{`{` + v4Meta + `, "salt_source": "disk"}, "n_mlps": 1}`, false, "salt_source must be"},
		{`{` + v4Meta + `, "salt": "00", "salt_digest": 3}, "n_mlps": 1}`,
			false, "'salt_digest' must be a string"},
		{`{` + v4Meta + `, "salt": "00"}, "n_mlps": 1, "seed": 2}`,
			false, "must not have a top-level 'seed'"},
	} {
		err := Validate(mustObj(t, c.md), c.partial)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: unexpected error %v", c.md, err)
		case c.err != "":
			schematest.WantErr[*InvalidDatasetError](t, err, c.err)
		}
	}
	if err := Validate(nil, true); err == nil {
		t.Error("nil metadata accepted")
	}
}
