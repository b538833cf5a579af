package seal

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

type result struct {
	Means []uint32 `json:"means"`
	Sum   float64  `json:"sum"`
	Exact []string `json:"exact"`
	Seal  Seal     `json:"seal"`
}

var resultSeal = Seal{
	Key:         "bakes/b/splits/s/mlps/mlp-000001.json",
	Bake:        "b",
	Split:       "s",
	Fingerprint: "f1",
}

func sealed(t *testing.T) []byte {
	t.Helper()
	r := result{Means: []uint32{0x3f800000, 7}, Sum: 0.1, Exact: []string{"00ff10"}}
	data, err := Marshal(&r, &r.Seal, resultSeal)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestRoundTrip(t *testing.T) {
	var r result
	if err := Unmarshal(resultSeal.Key, sealed(t), &r, &r.Seal, resultSeal); err != nil {
		t.Fatal(err)
	}
	if r.Means[0] != 0x3f800000 || r.Sum != 0.1 || r.Exact[0] != "00ff10" || r.Seal.Bake != "b" {
		t.Errorf("decoded %+v", r)
	}
	// An identity with empty fields checks only the others (a release's
	// manifest: integrity alone).
	elsewhere := Seal{Key: "elsewhere"}
	if err := Unmarshal(resultSeal.Key, sealed(t), &r, &r.Seal, elsewhere); err == nil {
		t.Error("a sealed object read under another key was accepted")
	}
	if err := Unmarshal(resultSeal.Key, sealed(t), &r, &r.Seal, Seal{}); err != nil {
		t.Errorf("integrity-only check: %v", err)
	}
}

// Each of these is a change that S3's own metadata would not see (a plain
// PUT, a restore): one ulp of a mean, one hex digit of an exact sum, a copy
// to another key or bake, a seal removed.
func TestDamageIsCaught(t *testing.T) {
	replaceOnce := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
	}
	good := sealed(t)
	cases := []struct {
		name     string
		edit     func([]byte) []byte
		want     error
		wantText string
	}{
		{"one ulp", replaceOnce("1065353216", "1065353217"), ErrDamaged, "does not match its seal"},
		{"one hex digit", replaceOnce("00ff10", "00ff11"), ErrDamaged, "does not match its seal"},
		{"not JSON", func(b []byte) []byte { return b[:len(b)-1] }, ErrDamaged, "not valid JSON"},
		{
			"no seal",
			func([]byte) []byte { return []byte(`{"means":[1],"sum":0.1,"exact":["00ff10"]}`) },
			ErrDamaged,
			"has no seal",
		},
	}
	for _, c := range cases {
		var r result
		err := Unmarshal(resultSeal.Key, c.edit(bytes.Clone(good)), &r, &r.Seal, resultSeal)
		if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.wantText) ||
			!strings.Contains(err.Error(), resultSeal.Key) {
			t.Errorf(
				"%s: %v, want %v naming %s (%q)",
				c.name,
				err,
				c.want,
				resultSeal.Key,
				c.wantText,
			)
		}
	}
	for _, other := range []Seal{
		{Key: "bakes/b/splits/s/mlps/mlp-000002.json", Bake: "b", Split: "s"},
		{Key: resultSeal.Key, Bake: "victim", Split: "s"},
		{Key: resultSeal.Key, Bake: "b", Split: "holdout"},
	} {
		var r result
		err := Unmarshal(resultSeal.Key, good, &r, &r.Seal, other)
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "was written for") {
			t.Errorf("read as %+v: %v, want a refusal", other, err)
		}
	}
	var r result
	other := resultSeal
	other.Fingerprint = "f2"
	if err := Unmarshal(resultSeal.Key, good, &r, &r.Seal, other); !errors.Is(err, ErrOtherSpec) {
		t.Errorf("another fingerprint: %v, want ErrOtherSpec", err)
	}
}
