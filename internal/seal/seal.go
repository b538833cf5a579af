// Package seal makes the JSON objects a bake writes and later trusts check
// themselves: each carries the sha256 of its own canonical bytes and the
// identity of what wrote it, which is the key it was written for, the bake,
// the split and the spec fingerprint, and every read checks both. It does
// not rely on S3 user metadata, which a bucket copy or restore drops and a
// plain PUT of other bytes need not touch.
//
// A seal is a checksum, not a signature: it catches any change made without
// recomputing it, be it a tool, a restore, a bit flip or an edit by hand,
// and any object read under another key, bake or split than it was written
// for. Whoever may write to the bucket can forge one: see docs/SECURITY.md.
package seal

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// Seal is an object's producer and checksum, stored in the object as the
// JSON field "seal".
type Seal struct {
	// Key is the object key the object was written for.
	Key string `json:"key"`
	// Bake is the ID of the bake that wrote it.
	Bake  string `json:"bake"`
	Split string `json:"split,omitempty"`
	// Fingerprint is bakeapi.Record.Fingerprint of the split's spec, where
	// the writer knew it.
	Fingerprint string `json:"fingerprint,omitempty"`
	// SHA256 is the hex sha256 of the object's JSON with this field empty.
	SHA256 string `json:"sha256"`
}

var (
	// ErrDamaged: the object has no seal, is not what its seal says, or was
	// written for another key, bake or split.
	ErrDamaged = errors.New("object is damaged")
	// ErrOtherSpec: an intact object written for another spec fingerprint.
	ErrOtherSpec = errors.New("object was computed for another spec")
	// ErrUnsealed: valid JSON without a seal, a damaged object or one
	// written by a whestbake that sealed none; it wraps ErrDamaged.
	ErrUnsealed = fmt.Errorf("object has no seal: %w", ErrDamaged)
)

// Marshal returns v's JSON with its seal *s, a field of v, set to id and the
// sha256 of v's JSON.
func Marshal(v any, s *Seal, id Seal) ([]byte, error) {
	*s = id
	s.SHA256 = ""
	canon, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	s.SHA256 = sum(canon)
	return json.Marshal(v)
}

// Unmarshal decodes data into v and checks v's seal *s: v must re-encode to
// the bytes the seal vouches for, so a change to any field read is caught,
// whatever the store's metadata says, and be written for id. Empty fields
// of id are not compared. Errors wrap ErrDamaged or ErrOtherSpec and say
// which object by name.
func Unmarshal(name string, data []byte, v any, s *Seal, id Seal) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s is not valid JSON (%v): %w", name, err, ErrDamaged)
	}
	got := *s
	if got.SHA256 == "" {
		return fmt.Errorf("%s: %w", name, ErrUnsealed)
	}
	s.SHA256 = ""
	canon, err := json.Marshal(v)
	s.SHA256 = got.SHA256
	if err != nil {
		return fmt.Errorf("%s: %v: %w", name, err, ErrDamaged)
	}
	if h := sum(canon); h != got.SHA256 {
		return fmt.Errorf(
			"%s does not match its seal (content sha256 %s, sealed %s): %w",
			name,
			h,
			got.SHA256,
			ErrDamaged,
		)
	}
	fields := []struct{ what, got, want string }{
		{"key", got.Key, id.Key},
		{"bake", got.Bake, id.Bake},
		{"split", got.Split, id.Split},
	}
	for _, f := range fields {
		if f.want != "" && f.got != f.want {
			return fmt.Errorf(
				"%s was written for %s %q, not %q: %w",
				name,
				f.what,
				f.got,
				f.want,
				ErrDamaged,
			)
		}
	}
	if id.Fingerprint != "" && got.Fingerprint != id.Fingerprint {
		return fmt.Errorf(
			"%s was computed for spec fingerprint %q, not %q: %w",
			name,
			got.Fingerprint,
			id.Fingerprint,
			ErrOtherSpec,
		)
	}
	return nil
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
