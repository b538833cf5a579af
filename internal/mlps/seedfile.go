package mlps

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strconv"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/readlimit"
	"github.com/whestbake/whestbake/internal/seeds"
)

// maxSeed is the exclusive upper bound of an input seed: seeds live in an
// int64 column.
var maxSeed = new(big.Int).Lsh(big.NewInt(1), 63)

// SeedFile is a parsed seeds file: the per-MLP input seeds and the sha256 of the
// exact bytes, which partials must share to be merged.
type SeedFile struct {
	Seeds     []int64
	SHA256    string
	Generated bool // drawn from OS entropy: another slice cannot reproduce them
}

// MaxSeedsFileBytes bounds a seeds file of n seeds that is read: 64 bytes
// a seed and 4 KiB besides. A seed has at most 19 digits; the rest is room
// for a separator and the indentation of a pretty-printed list. A file
// that is not a seeds file, a device or a log, fails at the limit instead
// of filling memory.
func MaxSeedsFileBytes(n int) int64 { return 4<<10 + 64*int64(max(n, 0)) }

// ReadSeedsFile reads the seeds file path of n seeds, refusing one over
// MaxSeedsFileBytes after reading no more than that.
func ReadSeedsFile(path string, n int) ([]byte, error) {
	limit := MaxSeedsFileBytes(n)
	data, err := readlimit.File(path, limit)
	if tooLarge := (*readlimit.TooLargeError)(nil); errors.As(err, &tooLarge) {
		return nil, fmt.Errorf(
			"seeds file %s is over %d bytes, more than a JSON list of %d seeds "+
				"takes (mlps.MaxSeedsFileBytes): it is not a seeds file, or n-mlps is wrong",
			path,
			limit,
			n,
		)
	}
	return data, err
}

// ParseSeeds reads a JSON array of distinct integers in [0, 2^63) from data,
// under the rules of whestbench's dataset_io.py _validate_mlp_seeds. name is
// used in errors.
func ParseSeeds(name string, data []byte, nMLPs int) (SeedFile, error) {
	list, err := seedList(name, data, nMLPs)
	if err != nil {
		return SeedFile{}, err
	}
	out := make([]int64, len(list))
	first := make(map[int64]int, len(list))
	for i, v := range list {
		s, err := parseSeed(name, i, v)
		if err != nil {
			return SeedFile{}, err
		}
		if j, dup := first[s]; dup {
			return SeedFile{}, fmt.Errorf(
				"seeds file %s contains duplicate at indices [%d, %d]: both = %d; "+
					"two MLPs with the same seed are bit-identical, regenerate the file",
				name,
				j,
				i,
				s,
			)
		}
		first[s] = i
		out[i] = s
	}
	sum := sha256.Sum256(data)
	return SeedFile{Seeds: out, SHA256: hex.EncodeToString(sum[:])}, nil
}

// seedList is the one JSON array data holds, which must have nMLPs values.
// Numbers stay as written, so that no seed is rounded through a float64.
func seedList(name string, data []byte, nMLPs int) ([]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf(
			"seeds file %s: invalid JSON (%v); "+
				"it must be a JSON array of integers such as [1001, 2002]",
			name,
			err,
		)
	}
	if dec.More() {
		return nil, fmt.Errorf(
			"seeds file %s: extra data after the JSON array; it must hold exactly one array",
			name,
		)
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("seeds file %s: must contain a JSON array; got %s", name, jsonKind(raw))
	}
	if len(list) != nMLPs {
		return nil, fmt.Errorf(
			"seeds file %s has %d seeds, expected n-mlps = %d "+
				"(the full dataset's count, also when baking a slice): "+
				"regenerate it with `whestbake dataset generate-seeds --n-mlps %d` or fix n-mlps",
			name,
			len(list),
			nMLPs,
			nMLPs,
		)
	}
	return list, nil
}

// parseSeed is v, value i of the seeds file name, as a seed: an integer
// written without fraction or exponent, in [0, 2^63).
func parseSeed(name string, i int, v any) (int64, error) {
	num, ok := v.(json.Number)
	if !ok {
		return 0, fmt.Errorf("seeds file %s: mlp_seeds[%d] must be an integer; got %s %v",
			name, i, jsonKind(v), v)
	}
	b, ok := new(big.Int).SetString(num.String(), 10)
	if !ok {
		return 0, fmt.Errorf("seeds file %s: mlp_seeds[%d] must be an integer; got %s", name, i, num)
	}
	if b.Sign() < 0 || b.Cmp(maxSeed) >= 0 {
		return 0, fmt.Errorf(
			"seeds file %s: mlp_seeds[%d] = %s is out of range [0, 2**63); "+
				"seeds must fit in an int64 column",
			name,
			i,
			num,
		)
	}
	return b.Int64(), nil
}

// EncodeSeeds renders seeds as the canonical one-line JSON array that
// generate-seeds writes; its sha256 identifies generated seeds in metadata.
func EncodeSeeds(seeds []int64) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, s := range seeds {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(s, 10))
	}
	b.WriteString("]\n")
	return b.Bytes()
}

// FromSeeds wraps generated seeds with the sha256 of their canonical encoding.
func FromSeeds(seeds []int64) SeedFile {
	sum := sha256.Sum256(EncodeSeeds(seeds))
	return SeedFile{Seeds: seeds, SHA256: hex.EncodeToString(sum[:])}
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "an object"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case []any:
		return "an array"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// FieldSeed is the field of DrawSeeds's root seed in its field errors.
const FieldSeed = "seed"

// DrawSeeds is n distinct input seeds, derived from root as numpy's
// SeedSequence would, or drawn from OS entropy when root is nil. A
// negative root is a field error of FieldSeed.
func DrawSeeds(n int, root *int64) ([]int64, error) {
	var sp *uint64
	if root != nil {
		if *root < 0 {
			return nil, bakeapi.FieldErrors{{
				Field:   FieldSeed,
				Problem: fmt.Sprintf("must be a non-negative integer, got %d", *root),
			}}
		}
		u := uint64(*root)
		sp = &u
	}
	return seeds.GenerateInputSeeds(n, sp)
}
