package schema

import (
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// HFMetadataKey is the parquet key-value entry HF datasets reads the column
// features from. The builder takes the features of the first file and casts
// every file to them, and concatenate_datasets, whestbench's merge, needs
// them identical, so the text must be exactly what datasets writes.
const HFMetadataKey = "huggingface"

func valueFeature(dtype string) *pyjson.Object {
	return pyjson.NewObject().Set("dtype", dtype).Set("_type", "Value")
}

// FeaturesJSON returns the huggingface key-value text for width w and depth
// d, byte-equal to what datasets 4.x writes with json.dumps' default separators.
func FeaturesJSON(w, d int) string {
	doc := pyjson.NewObject().Set("info", pyjson.NewObject().Set("features", Features(w, d)))
	b, err := pyjson.Dumps(doc, false)
	if err != nil {
		panic(err) // only ints and strings: cannot fail
	}
	return string(b)
}

// Features is datasets' Features of whestbench's columns for width w and
// depth d, as datasets' asdict writes them, also into dataset_info.json:
// a scalar a Value, an array of one dimension a List of its length, one
// of more an Array2D to Array5D, as datasets/features/features.py defines.
func Features(w, d int) *pyjson.Object {
	f := pyjson.NewObject()
	for i := range Columns {
		f.Set(Columns[i].Name, feature(&Columns[i], w, d))
	}
	return f
}

// feature is column c's feature for width w and depth d.
func feature(c *Column, w, d int) *pyjson.Object {
	dims := c.Dims(w, d)
	switch len(dims) {
	case 0:
		return valueFeature(c.Type.String())
	case 1:
		return pyjson.NewObject().
			Set("feature", valueFeature(c.Type.String())).
			Set("length", dims[0]).
			Set("_type", "List")
	}
	return pyjson.NewObject().
		Set("shape", dims).
		Set("dtype", c.Type.String()).
		Set("_type", fmt.Sprintf("Array%dD", len(dims)))
}

// ShapeFromFeatures reads width and depth from a huggingface key-value text:
// the first array's dimensions give them, and every array's must agree.
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
	declared, err := arrayDims(features)
	if err != nil {
		return 0, 0, err
	}
	dim := firstDims(declared)
	for i := range Columns {
		for k, s := range Columns[i].Shape {
			if declared[i][k] != dim[s] {
				return 0, 0, fmt.Errorf("features disagree: %s", dimsText(declared))
			}
		}
	}
	width, depth = int(dim[Width]), int(dim[Depth])
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

// arrayDims are the dimensions each array column's feature declares, by
// its Col* index, nil for a scalar: an array of one dimension declares
// its length, one of more its shape.
func arrayDims(features *pyjson.Object) ([NumColumns][]int64, error) {
	var declared [NumColumns][]int64
	for i := range Columns {
		c := &Columns[i]
		switch {
		case len(c.Shape) == 1:
			f, _ := features.GetObject(c.Name)
			n, ok := f.GetInt("length")
			if !ok {
				return declared, fmt.Errorf("feature %s has no integer length", c.Name)
			}
			declared[i] = []int64{n}
		case c.Array():
			dims, err := featureShape(features, c.Name, len(c.Shape))
			if err != nil {
				return declared, err
			}
			declared[i] = dims
		}
	}
	return declared, nil
}

// firstDims are the depth and the width, by Dim, as the first array to
// have each dimension declares it.
func firstDims(declared [NumColumns][]int64) [2]int64 {
	var dim [2]int64
	var found [2]bool
	for i := range Columns {
		for k, s := range Columns[i].Shape {
			if !found[s] {
				dim[s], found[s] = declared[i][k], true
			}
		}
	}
	return dim
}

// dimsText is what each array declares, for an error: weights [2 4 4],
// all_layer_means [2 4], final_means length 4.
func dimsText(declared [NumColumns][]int64) string {
	var parts []string
	for i := range Columns {
		switch c := &Columns[i]; len(c.Shape) {
		case 0:
		case 1:
			parts = append(parts, fmt.Sprintf("%s length %d", c.Name, declared[i][0]))
		default:
			parts = append(parts, fmt.Sprintf("%s %v", c.Name, declared[i]))
		}
	}
	return strings.Join(parts, ", ")
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
// elsewhere, in key order, spacing or other keys.
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
