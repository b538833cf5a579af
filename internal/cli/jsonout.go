package cli

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/whestbake/whestbake/dataset"
)

// The schemas of --json, one per verb: docs/CLI.md, "JSON output". Each
// object names its schema in its "schema" field; the version after the
// slash changes only when a field is removed, renamed, or changes its type
// or meaning. A new field keeps the version: readers ignore keys they do
// not know.
const (
	statusSchema  = "whestbake.status/v1" // status, and each line of watch
	listSchema    = "whestbake.list/v1"
	cancelSchema  = "whestbake.cancel/v1"
	gcSchema      = "whestbake.gc/v1"
	infoSchema    = "whestbake.info/v1"
	inspectSchema = "whestbake.inspect/v1"
	verifySchema  = "whestbake.verify/v1"
	compareSchema = "whestbake.compare/v1"
)

// jsonFlag registers a verb's --json; usage says what it prints.
func jsonFlag(cmd *cobra.Command, asJSON *bool, usage string) {
	cmd.Flags().BoolVar(asJSON, "json", false, usage+" (docs/CLI.md has its schema)")
}

// JSON has no number that is not finite, by RFC 8259, so such a value is
// written as the string Python's json.dumps spells it: "Infinity",
// "-Infinity", "NaN". metadata.json may hold one: 1e400 is a valid JSON
// number that Python's json.loads, and whestbake after it, reads as
// infinity.

// nonFiniteText is f's spelling in Python's json.dumps, "" for a finite f.
func nonFiniteText(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return ""
}

// jsonFloat is a float64 that JSON output carries whatever its value: a
// number, or nonFiniteText's string.
type jsonFloat float64

func (f jsonFloat) MarshalJSON() ([]byte, error) {
	if s := nonFiniteText(float64(f)); s != "" {
		return json.Marshal(s)
	}
	return json.Marshal(float64(f))
}

// metadataJSON is md as JSON that every reader parses: its keys in
// metadata.json's order, integers exact, floats as Python writes them,
// and each number that is not finite as nonFiniteText's string, whose JSON
// Pointer, RFC 6901, is listed in nonFinite so that a reader can tell it
// from a string the metadata holds.
func metadataJSON(md dataset.Metadata) (data json.RawMessage, nonFinite []string, err error) {
	nonFinite = []string{}
	copied := md.Clone()
	finite(copied, "", &nonFinite)
	data, err = copied.MarshalJSON()
	return data, nonFinite, err
}

// finite returns v with every number that is not finite replaced by its
// string, in place for objects and arrays, adding each one's pointer. Such
// a number is a float64 in a dataset.Object: integers are json.Numbers of
// any size, kept exact.
func finite(v any, pointer string, nonFinite *[]string) any {
	switch x := v.(type) {
	case float64:
		if s := nonFiniteText(x); s != "" {
			*nonFinite = append(*nonFinite, pointer)
			return s
		}
	case *dataset.Object:
		for _, k := range x.Keys() {
			item, _ := x.Get(k)
			x.Set(k, finite(item, pointer+"/"+pointerToken(k), nonFinite))
		}
	case []any:
		for i := range x {
			x[i] = finite(x[i], pointer+"/"+strconv.Itoa(i), nonFinite)
		}
	}
	return v
}

// pointerToken escapes a key as a JSON Pointer reference token.
func pointerToken(key string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(key)
}
