package readlimit

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// TokenBytes is how many bytes of a document's cap allow one JSON token: a
// key, a value, an opening bracket. Real documents spend 10 to 30 bytes a
// token; a hostile one of "{}"s spends 3, and decodes to a tree tens of
// times its size: a 40 MB one took 2 GB. Counting tokens against the cap
// first bounds what decoding builds to a few times the cap, whatever the
// document's shape.
const TokenBytes = 32

// JSONTokens refuses a JSON document of more than limit/TokenBytes tokens,
// limit being the cap the document was read under. It reads a token at a
// time, so its own memory is the decoder's window, not the tree. Malformed
// JSON passes here and fails where it is decoded.
func JSONTokens(data []byte, limit int64) error {
	max := limit / TokenBytes
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for n := int64(0); ; {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			continue
		}
		if n++; n > max {
			return fmt.Errorf("it holds over %d JSON tokens, more than any such document "+
				"of at most %s (one per %d bytes)", max, Size(limit), TokenBytes)
		}
	}
}
