package dataset

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// pyLoads decodes one JSON document into the canonical representation (see
// Object): objects keep key order (a repeated key keeps its first position
// and its last value, like json.loads), integers stay exact as json.Number,
// other numbers become float64.
func pyLoads(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("extra data after the JSON value at offset %d", dec.InputOffset())
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return decodeObject(dec)
		case '[':
			return decodeArray(dec)
		}
		return nil, fmt.Errorf("unexpected %q at offset %d", t, dec.InputOffset())
	case json.Number:
		if isIntText(string(t)) {
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

func decodeObject(dec *json.Decoder) (*Object, error) {
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
		v, err := decodeValue(dec)
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

func decodeArray(dec *json.Decoder) ([]any, error) {
	a := []any{}
	for dec.More() {
		v, err := decodeValue(dec)
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
