package pyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// Loads decodes one JSON document into the canonical representation that
// Object describes: objects keep key order, a repeated key keeping its first
// position and its last value, like json.loads; integers stay exact as json.Number,
// other numbers become float64.
func Loads(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value at offset %d", dec.InputOffset())
	}
	return v, nil
}

// maxNesting bounds how deep arrays and objects may nest. The decoder
// recurses once per level, so without it ten megabytes of "[" in a
// corrupt metadata.json or parquet footer overflow the goroutine stack,
// a fatal error no caller can recover from. encoding/json's Unmarshal
// uses the same limit; Python's json.loads stops far earlier.
const maxNesting = 10000

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth == maxNesting && (t == '{' || t == '[') {
			return nil, fmt.Errorf("arrays and objects nest more than %d deep at offset %d",
				maxNesting, dec.InputOffset())
		}
		switch t {
		case '{':
			return decodeObject(dec, depth+1)
		case '[':
			return decodeArray(dec, depth+1)
		}
		return nil, fmt.Errorf("unexpected %q at offset %d", t, dec.InputOffset())
	case json.Number:
		if IsIntText(string(t)) {
			return t, nil
		}
		f, err := strconv.ParseFloat(string(t), 64)
		if err != nil && !isRangeErr(err) {
			return nil, err
		}
		return f, nil
	default: // string, bool, nil
		return t, nil
	}
}

func decodeObject(dec *json.Decoder, depth int) (*Object, error) {
	o := NewObject()
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is not a string at offset %d", dec.InputOffset())
		}
		v, err := decodeValue(dec, depth)
		if err != nil {
			return nil, err
		}
		o.Set(key, v)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, err
	}
	return o, nil
}

func decodeArray(dec *json.Decoder, depth int) ([]any, error) {
	a := []any{}
	for dec.More() {
		v, err := decodeValue(dec, depth)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, err
	}
	return a, nil
}
