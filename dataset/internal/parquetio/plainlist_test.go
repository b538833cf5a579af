package parquetio

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/rle"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/schema"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// The format specification's own example of a bit-packed run: the values
// 0 to 7 at 3 bits each are the bytes 10001000 11000110 11111010.
func TestLevelDecoderReadsTheSpecExample(t *testing.T) {
	d := levelDecoder{data: []byte{1<<1 | 1, 0b10001000, 0b11000110, 0b11111010}, width: 3}
	got := make([]byte, 8)
	if err := d.read(got); err != nil {
		t.Fatal(err)
	}
	if want := []byte{0, 1, 2, 3, 4, 5, 6, 7}; !bytes.Equal(got, want) {
		t.Fatalf("decoded %v, want %v", got, want)
	}
	if err := d.read(got[:1]); err == nil {
		t.Fatal("read past the end of the levels without an error")
	}
}

// Levels of every width these files use, long runs (as list nesting gives)
// mixed with noise (which parquet-go bit-packs), decode to what was encoded
// whatever the stretches they are read in.
func TestLevelDecoderRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for width := 1; width <= 3; width++ {
		for trial := range 20 {
			var levels []byte
			for len(levels) < 5000 {
				v := byte(rng.IntN(1 << width))
				if rng.IntN(2) == 0 {
					levels = append(levels, bytes.Repeat([]byte{v}, 1+rng.IntN(300))...)
				} else {
					levels = append(levels, v)
				}
			}
			enc, err := (&rle.Encoding{BitWidth: width}).EncodeLevels(nil, levels)
			if err != nil {
				t.Fatal(err)
			}
			d := levelDecoder{data: enc, width: uint(width)}
			got := make([]byte, len(levels))
			for at := 0; at < len(got); {
				n := min(len(got)-at, 1+rng.IntN(700))
				if err := d.read(got[at : at+n]); err != nil {
					t.Fatalf("width %d trial %d at %d: %v", width, trial, at, err)
				}
				at += n
			}
			if !bytes.Equal(got, levels) {
				at := mismatch(got, levels)
				t.Fatalf("width %d trial %d: value %d decoded as %d, was %d",
					width, trial, at, got[at], levels[at])
			}
		}
	}
}

// The float lists of Writer's files are read without parquet-go
// (plainListCursor), whether pages hold several rows (read whole first),
// one row (straight into the row) or a row spans pages, and with one-row
// groups: every row comes back bit for bit, and a flipped bit in a page read
// straight into a row is still caught by the page CRC.
func TestPlainListsRoundTrip(t *testing.T) {
	defer func(b int64) { rowGroupFloatBytes = b }(rowGroupFloatBytes)
	for _, tc := range []struct {
		shape      bakeapi.Spec
		rows       int
		groupBytes int64
	}{
		{bakeapi.Spec{Width: 8, Depth: 3}, 200, 64 << 20},   // many rows a page
		{bakeapi.Spec{Width: 256, Depth: 8}, 5, 64 << 20},   // a page a row
		{bakeapi.Spec{Width: 64, Depth: 4}, 5, 64 << 10},    // a group a row, one page
		{bakeapi.Spec{Width: 256, Depth: 8}, 3, 64 << 10},   // a group a row, a page a row
		{bakeapi.Spec{Width: 100, Depth: 3}, 130, 64 << 20}, // ragged pages and groups
	} {
		rowGroupFloatBytes = tc.groupBytes
		perGroup := rowsPerGroup(tc.shape.Width, tc.shape.Depth)
		name := fmt.Sprintf("%dx%dx%d/%d", tc.shape.Width, tc.shape.Depth, tc.rows, perGroup)
		t.Run(name, func(t *testing.T) {
			rows := schematest.Rows(tc.shape, 0, tc.rows)
			rows[tc.rows-1].Weights[1] = float32(math.NaN())
			var buf bytes.Buffer
			if err := Write(&buf, tc.shape, rows); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "rows.parquet")
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			for g, plain := range r.plain {
				if !plain[schema.ColWeights] || !plain[schema.ColLayerMeans] || !plain[schema.ColFinalMeans] {
					t.Fatalf("row group %d: float lists %v not read as plain pages", g, plain)
				}
			}
			r.Close()
			got := storedRows(t, path)
			if len(got) != len(rows) {
				t.Fatalf("read %d rows, wrote %d", len(got), len(rows))
			}
			for i := range rows {
				for _, l := range [][2][]float32{
					{got[i].Weights, rows[i].Weights},
					{got[i].LayerMeans, rows[i].LayerMeans},
					{got[i].FinalMeans, rows[i].FinalMeans},
				} {
					if !bytes.Equal(floatBytes(l[0]), floatBytes(l[1])) {
						t.Fatalf("row %d: a list differs from what was written", i)
					}
				}
			}

			last := rows[tc.rows-1].Weights
			at := bytes.LastIndex(buf.Bytes(), floatBytes(last[len(last)-3:]))
			if at < 0 {
				t.Fatal("the last row's weights not found in the file")
			}
			flipped := bytes.Clone(buf.Bytes())
			flipped[at+1] ^= 0x40
			if err := os.WriteFile(path, flipped, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, _, err = Read(path)
			schematest.WantErr[*schema.InvalidDatasetError](t, err, "crc32")
		})
	}
}

// Any stretch of expected repetition levels is Dremel's for a depth × width
// × width list: a value starts the row (0), a layer (1), a matrix row (2) or
// continues one (3).
func TestFillRepsIsDremels(t *testing.T) {
	const d, w = 3, 5
	var all []byte
	for l := range d {
		for i := range w {
			for j := range w {
				switch {
				case j > 0:
					all = append(all, 3)
				case i > 0:
					all = append(all, 2)
				case l > 0:
					all = append(all, 1)
				default:
					all = append(all, 0)
				}
			}
		}
	}
	strides := listStrides(w, d)[schema.ColWeights]
	for k := range all {
		for n := 0; k+n <= len(all); n += 7 {
			got := make([]byte, n)
			fillReps(got, k, strides)
			if !bytes.Equal(got, all[k:k+n]) {
				t.Fatalf("levels [%d, %d) = %v, want %v", k, k+n, got, all[k:k+n])
			}
		}
	}
}
