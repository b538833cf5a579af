package bakeapi

import (
	"encoding/json"
	"testing"
	"time"
)

// A Duration travels as text, and reads both that and the integer
// nanoseconds a time.Duration field was recorded as, so histories written
// before it decode to the same value.
func TestDurationJSON(t *testing.T) {
	got, err := json.Marshal(Policy{SliceHeartbeat: Duration(90 * time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil || m["SliceHeartbeat"] != "1m30s" {
		t.Errorf("SliceHeartbeat encodes as %v (%v), want \"1m30s\"", m["SliceHeartbeat"], err)
	}
	for _, in := range []string{`"1m30s"`, `90000000000`} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err != nil || d != Duration(90*time.Second) {
			t.Errorf("%s decodes to %v (%v), want 1m30s", in, d, err)
		}
	}
	for _, in := range []string{`"90"`, `"soon"`, `1.5`, `true`} {
		var d Duration
		if err := json.Unmarshal([]byte(in), &d); err == nil {
			t.Errorf("%s decodes to %v, want an error", in, d)
		}
	}
}
