package schema

import (
	"strings"
	"testing"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// The huggingface text a file declares its shape by: each array's
// feature read, and every array agreeing on one width and one depth, or
// an error that names the feature.
func TestShapeFromFeatures(t *testing.T) {
	if w, d, err := ShapeFromFeatures(FeaturesJSON(4, 2)); w != 4 || d != 2 || err != nil {
		t.Fatalf("datasets' own text of width 4, depth 2 reads as %d, %d, %v", w, d, err)
	}
	// with is the text of width 4, depth 2 with one feature replaced.
	with := func(feature, replacement string) string {
		v, err := pyjson.Loads([]byte(replacement))
		if err != nil {
			t.Fatal(err)
		}
		doc := pyjson.NewObject().Set("info",
			pyjson.NewObject().Set("features", Features(4, 2).Set(feature, v)))
		text, _ := pyjson.Dumps(doc, false)
		return string(text)
	}
	for _, c := range []struct{ text, want string }{
		{`{"info": {}}`, "has no info.features object"},
		{`[1`, "is not JSON"},
		{with("weights", `{"shape": [2, 4], "dtype": "float32", "_type": "Array2D"}`),
			"feature weights has no 3-dimensional shape"},
		{with("weights", `{"shape": [2, 4, "4"], "dtype": "float32", "_type": "Array3D"}`),
			`feature weights shape [2 4 4] is not a list of integers`},
		{with("all_layer_means", `{"dtype": "float32", "_type": "Array2D"}`),
			"feature all_layer_means has no 2-dimensional shape"},
		{with("final_means", `{"feature": {"dtype": "float32", "_type": "Value"}, "_type": "List"}`),
			"feature final_means has no integer length"},
		{with("weights", `{"shape": [2, 4, 5], "dtype": "float32", "_type": "Array3D"}`),
			"features disagree: weights [2 4 5], all_layer_means [2 4], final_means length 4"},
		{with("all_layer_means", `{"shape": [3, 4], "dtype": "float32", "_type": "Array2D"}`),
			"features disagree: weights [2 4 4], all_layer_means [3 4], final_means length 4"},
		{with("final_means", `{"feature": {"dtype": "float32", "_type": "Value"}, "length": 5, "_type": "List"}`),
			"features disagree: weights [2 4 4], all_layer_means [2 4], final_means length 5"},
		{FeaturesJSON(0, 2), "dataset: shape width=0 depth=2: both must be positive"},
		{FeaturesJSON(1<<32, 1<<1), "declares width 4294967296, depth 2: depth·width² overflows"},
	} {
		_, _, err := ShapeFromFeatures(c.text)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s:\ngot error %v\nwant %s", c.text, err, c.want)
		}
	}
}
