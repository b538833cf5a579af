// Package pyjson is JSON as Python's json module reads and writes it: an
// object that keeps its keys in insertion order, Object, integers of any
// size kept exact, floats in float.__repr__'s digits, and the two layouts of
// json.dumps, indent=2 and the default one-line separators, byte for byte.
// metadata.json, the huggingface features text of a parquet footer, the
// prepared tree's JSON files and sampling_budget_breakdown are all written
// by Python in whestbench, so whestbake writes them through here.
package pyjson

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
)

// Object is a JSON object that keeps its keys in insertion order, the way a
// Python dict does. whestbench writes metadata.json with json.dumps(indent=2)
// and never sorts keys, so key order is part of the format.
//
// Values are held in one canonical form: nil, bool, string, json.Number,
// which keeps an integer of any size exact, float64, *Object, or []any of those. Set
// converts Go integers, floats, *big.Int, slices and arrays to that form.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Set stores v under key and returns o so calls can be chained. A key that
// is already present keeps its position, as assignment to a Python dict does.
func (o *Object) Set(key string, v any) *Object {
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = Canonical(v)
	return o
}

// Get returns the value stored under key.
func (o *Object) Get(key string) (any, bool) {
	if o == nil {
		return nil, false
	}
	v, ok := o.vals[key]
	return v, ok
}

// Has reports whether key is present, also when its value is null.
func (o *Object) Has(key string) bool {
	_, ok := o.Get(key)
	return ok
}

// Delete removes key; a missing key is not an error.
func (o *Object) Delete(key string) {
	if o == nil {
		return
	}
	if _, ok := o.vals[key]; !ok {
		return
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Keys returns the keys in order. The slice is a copy.
func (o *Object) Keys() []string {
	if o == nil {
		return nil
	}
	return append([]string(nil), o.keys...)
}

// Len returns the number of keys.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.keys)
}

// GetString returns the value under key if it is a string.
func (o *Object) GetString(key string) (string, bool) {
	v, _ := o.Get(key)
	s, ok := v.(string)
	return s, ok
}

// GetInt returns the value under key if it is a JSON integer that fits in an
// int64. Floats are not integers here, as in Python, where 1.0 is not an int.
func (o *Object) GetInt(key string) (int64, bool) {
	v, _ := o.Get(key)
	return AsInt(v)
}

// GetFloat returns the value under key if it is a number, integer or float.
func (o *Object) GetFloat(key string) (float64, bool) {
	v, _ := o.Get(key)
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	}
	return 0, false
}

// GetBool returns the value under key if it is a boolean.
func (o *Object) GetBool(key string) (bool, bool) {
	v, _ := o.Get(key)
	b, ok := v.(bool)
	return b, ok
}

// Truthy reports whether the value under key is truthy in Python's sense:
// present and not null, false, zero, or an empty string, list or object.
func (o *Object) Truthy(key string) bool {
	v, ok := o.Get(key)
	if !ok {
		return false
	}
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case json.Number:
		f, _ := new(big.Float).SetString(string(x))
		return f != nil && f.Sign() != 0
	case float64:
		return x != 0
	case *Object:
		return x.Len() > 0
	case []any:
		return len(x) > 0
	}
	return true
}

// GetObject returns the value under key if it is an object.
func (o *Object) GetObject(key string) (*Object, bool) {
	v, _ := o.Get(key)
	m, ok := v.(*Object)
	return m, ok
}

// GetArray returns the value under key if it is an array.
func (o *Object) GetArray(key string) ([]any, bool) {
	v, _ := o.Get(key)
	a, ok := v.([]any)
	return a, ok
}

// Clone returns a deep copy, so edits to the copy never reach o.
func (o *Object) Clone() *Object {
	if o == nil {
		return nil
	}
	c := &Object{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = CloneValue(v)
	}
	return c
}

// CloneValue is a deep copy of a canonical value: objects and arrays are
// copied, so edits to the copy never reach v.
func CloneValue(v any) any {
	switch x := v.(type) {
	case *Object:
		return x.Clone()
	case []any:
		c := make([]any, len(x))
		for i := range x {
			c[i] = CloneValue(x[i])
		}
		return c
	}
	return v
}

// MarshalJSON encodes o exactly as Python's json.dumps(o, indent=2) would.
func (o *Object) MarshalJSON() ([]byte, error) { return Dumps(o, true) }

// UnmarshalJSON decodes a JSON object, keeping key order and exact integers.
func (o *Object) UnmarshalJSON(data []byte) error {
	v, err := Loads(data)
	if err != nil {
		return err
	}
	m, ok := v.(*Object)
	if !ok {
		return &json.UnmarshalTypeError{Value: Kind(v), Type: reflect.TypeFor[Object]()}
	}
	*o = *m
	return nil
}

// Canonical converts the Go values callers naturally pass to the one
// representation the encoder and the comparisons understand.
func Canonical(v any) any {
	switch x := v.(type) {
	case nil, bool, string, json.Number, float64, *Object:
		return v
	case float32:
		return float64(x)
	case int:
		return json.Number(strconv.FormatInt(int64(x), 10))
	case int8:
		return json.Number(strconv.FormatInt(int64(x), 10))
	case int16:
		return json.Number(strconv.FormatInt(int64(x), 10))
	case int32:
		return json.Number(strconv.FormatInt(int64(x), 10))
	case int64:
		return json.Number(strconv.FormatInt(x, 10))
	case uint:
		return json.Number(strconv.FormatUint(uint64(x), 10))
	case uint8:
		return json.Number(strconv.FormatUint(uint64(x), 10))
	case uint16:
		return json.Number(strconv.FormatUint(uint64(x), 10))
	case uint32:
		return json.Number(strconv.FormatUint(uint64(x), 10))
	case uint64:
		return json.Number(strconv.FormatUint(x, 10))
	case *big.Int:
		return json.Number(x.String())
	case []any:
		c := make([]any, len(x))
		for i := range x {
			c[i] = Canonical(x[i])
		}
		return c
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		c := make([]any, rv.Len())
		for i := range c {
			c[i] = Canonical(rv.Index(i).Interface())
		}
		return c
	}
	return v // unsupported; the encoder reports it by type
}

// AsInt is v as an int64 when it is a JSON integer that fits in one; a
// float is no integer, as in Python, where 1.0 is not an int.
func AsInt(v any) (int64, bool) {
	n, ok := v.(json.Number)
	if !ok || !IsIntText(string(n)) {
		return 0, false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return i, err == nil
}

// IsIntText reports whether s, the text of a json.Number, is an integer.
func IsIntText(s string) bool { return !strings.ContainsAny(s, ".eE") }

// Equal compares two canonical values with Python's == semantics for
// decoded JSON: objects compare as sets of keys, whatever their order,
// integers exactly, and 1 == 1.0.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number, float64:
		return numbersEqual(x, b)
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, k := range x.keys {
			yv, ok := y.vals[k]
			if !ok || !Equal(x.vals[k], yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return false
}

func numbersEqual(a, b any) bool {
	ai, aInt := a.(json.Number)
	bi, bInt := b.(json.Number)
	if aInt && bInt && IsIntText(string(ai)) && IsIntText(string(bi)) {
		x, okx := new(big.Int).SetString(string(ai), 10)
		y, oky := new(big.Int).SetString(string(bi), 10)
		return okx && oky && x.Cmp(y) == 0
	}
	x, okx := toBigFloat(a)
	y, oky := toBigFloat(b)
	return okx && oky && x.Cmp(y) == 0
}

func toBigFloat(v any) (*big.Float, bool) {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		return new(big.Float).SetFloat64(x), true
	case json.Number:
		f, ok := new(big.Float).SetPrec(256).SetString(string(x))
		return f, ok
	}
	return nil, false
}

// Kind names v's JSON type, one of null, boolean, string, number, array
// and object, for error messages.
func Kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case []any:
		return "array"
	case *Object:
		return "object"
	}
	return reflect.TypeOf(v).String()
}
