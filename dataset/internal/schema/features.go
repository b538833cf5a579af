package schema

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// HFMetadataKey is the parquet key-value entry HF datasets reads the column
// features from. The builder takes the features of the first file and casts
// every file to them, and concatenate_datasets (whestbench's merge) needs
// them identical, so the text must be exactly what datasets writes.
const HFMetadataKey = "huggingface"

func valueFeature(dtype string) *pyjson.Object {
	return pyjson.NewObject().Set("dtype", dtype).Set("_type", "Value")
}

// FeaturesJSON returns the huggingface key-value text for width w and depth
// d, byte-equal to what datasets 4.x writes (json.dumps default separators).
func FeaturesJSON(w, d int) string {
	doc := pyjson.NewObject().Set("info", pyjson.NewObject().Set("features", Features(w, d)))
	b, err := pyjson.Dumps(doc, false)
	if err != nil {
		panic(err) // only ints and strings: cannot fail
	}
	return string(b)
}

// Features is datasets' Features of whestbench's columns for width w and
// depth d, as datasets' asdict writes them (also into dataset_info.json).
func Features(w, d int) *pyjson.Object {
	return pyjson.NewObject().
		Set("mlp_id", valueFeature("int32")).
		Set("mlp_name", valueFeature("string")).
		Set("mlp_seed", valueFeature("int64")).
		Set("weights", pyjson.NewObject().
			Set("shape", []int{d, w, w}).
			Set("dtype", "float32").
			Set("_type", "Array3D")).
		Set("all_layer_means", pyjson.NewObject().
			Set("shape", []int{d, w}).
			Set("dtype", "float32").
			Set("_type", "Array2D")).
		Set("final_means", pyjson.NewObject().
			Set("feature", valueFeature("float32")).
			Set("length", w).
			Set("_type", "List")).
		Set("avg_variance", valueFeature("float64")).
		Set("sampling_budget_breakdown", valueFeature("string"))
}

// ShapeFromFeatures reads (width, depth) from a huggingface key-value text
// and checks that the three array features agree with each other.
func ShapeFromFeatures(text string) (width, depth int, err error) {
	v, err := pyjson.Loads([]byte(text))
	if err != nil {
		return 0, 0, fmt.Errorf("is not JSON: %v", err)
	}
	doc, _ := v.(*pyjson.Object)
	info, _ := doc.GetObject("info")
	features, ok := info.GetObject("features")
	if !ok {
		return 0, 0, fmt.Errorf("has no info.features object")
	}
	weights, err := featureShape(features, "weights", 3)
	if err != nil {
		return 0, 0, err
	}
	means, err := featureShape(features, "all_layer_means", 2)
	if err != nil {
		return 0, 0, err
	}
	final, _ := features.GetObject("final_means")
	length, ok := final.GetInt("length")
	if !ok {
		return 0, 0, fmt.Errorf("feature final_means has no integer length")
	}
	if weights[2] != weights[1] ||
		means[0] != weights[0] ||
		means[1] != weights[1] ||
		length != weights[1] {
		return 0, 0, fmt.Errorf("features disagree: weights %v, all_layer_means %v, "+
			"final_means length %d", weights, means, length)
	}
	width, depth = int(weights[1]), int(weights[0])
	if err := CheckShape(width, depth); err != nil {
		return 0, 0, err
	}
	// A row holds depth·width² weights; a count beyond int64 would wrap
	// around in every size check after this one.
	hi1, ww := bits.Mul64(uint64(width), uint64(width))
	hi2, dww := bits.Mul64(ww, uint64(depth))
	if hi1 != 0 || hi2 != 0 || dww > math.MaxInt64 {
		return 0, 0, fmt.Errorf("declares width %d, depth %d: depth·width² overflows", width, depth)
	}
	return width, depth, nil
}

func featureShape(features *pyjson.Object, name string, rank int) ([]int64, error) {
	f, _ := features.GetObject(name)
	raw, ok := f.GetArray("shape")
	if !ok || len(raw) != rank {
		return nil, fmt.Errorf("feature %s has no %d-dimensional shape", name, rank)
	}
	dims := make([]int64, rank)
	for i, x := range raw {
		n, ok := pyjson.AsInt(x)
		if !ok {
			return nil, fmt.Errorf("feature %s shape %v is not a list of integers", name, raw)
		}
		dims[i] = n
	}
	return dims, nil
}

// featuresDiff says where the huggingface text got differs from want: the
// first feature whose definition differs, or that the text differs
// elsewhere (key order, spacing, other keys).
func featuresDiff(got, want string) string {
	v, err := pyjson.Loads([]byte(got))
	if err != nil {
		return fmt.Sprintf("it is not JSON: %v", err)
	}
	w, _ := pyjson.Loads([]byte(want))
	gotFeatures := infoFeatures(v)
	for _, name := range infoFeatures(w).Keys() {
		g, _ := gotFeatures.Get(name)
		x, _ := infoFeatures(w).Get(name)
		if pyjson.Compact(g) != pyjson.Compact(x) {
			return fmt.Sprintf("feature %s is %s, expected %s",
				name, pyjson.Compact(g), pyjson.Compact(x))
		}
	}
	return fmt.Sprintf("the text is %d bytes, expected exactly %q", len(got), want)
}

// infoFeatures is the info.features object of a decoded huggingface text.
func infoFeatures(v any) *pyjson.Object {
	doc, _ := v.(*pyjson.Object)
	info, _ := doc.GetObject("info")
	features, _ := info.GetObject("features")
	return features
}
