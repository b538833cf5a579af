package bakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration that travels as text: its JSON is the
// duration as Go spells it, as in "1m30s", so a bake's input reads as its
// config does in the Web UI and in `temporal workflow show`, where a
// time.Duration would show nanoseconds. It decodes both that text and
// integer nanoseconds, which some recorded histories hold, so their bakes
// replay.
type Duration time.Duration

// String is the duration as time.Duration spells it.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a JSON string, "1m30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads "1m30s" in time.ParseDuration's syntax, or a number
// of nanoseconds, which is how a time.Duration field is encoded.
func (d *Duration) UnmarshalJSON(data []byte) error {
	if bytes.HasPrefix(data, []byte(`"`)) {
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	var ns int64
	if err := json.Unmarshal(data, &ns); err != nil {
		return fmt.Errorf("duration %s: want a string such as \"1m30s\" or integer nanoseconds", data)
	}
	*d = Duration(ns)
	return nil
}
