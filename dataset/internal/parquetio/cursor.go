package parquetio

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// columnCursor walks the pages of one column chunk, one row at a time.
// Float lists are read a page at a time straight from the decoded PLAIN
// buffer; going through parquet.Value would cost 24 bytes and a call per
// float, which is what made reading large MLPs slow.
type columnCursor struct {
	spec    columnSpec
	pages   parquet.Pages
	reps    []byte          // current page's repetition levels; nil for scalars
	floats  []float32       // current page's values, list columns
	vals    []parquet.Value // current page's values, scalar columns
	pos     int             // next unread value of the current page
	pageLen int             // values in the current page
	scalar  []parquet.Value // reused read buffer for scalar pages
	dict    []parquet.Value // reused read buffer for dictionary-encoded float pages
	owned   []float32       // reused copy of dictionary-decoded floats
	page    parquet.Page    // current page, released when the next one is read
	want    []byte          // expected repetition levels of a stretch of values
}

func newColumnCursor(spec columnSpec, pages parquet.Pages) *columnCursor {
	return &columnCursor{spec: spec, pages: pages}
}

// nextPage loads the next page and checks that it holds no nulls: a
// whestbench row has every value present, so each one sits at the
// column's maximum definition level. io.EOF means the chunk is exhausted.
func (c *columnCursor) nextPage() error { return parquetCall(c.loadPage) }

func (c *columnCursor) loadPage() error {
	c.release()
	for {
		page, err := c.pages.ReadPage()
		if err != nil {
			return err
		}
		c.page = page
		if page.NumValues() > 0 {
			break
		}
		c.release()
	}
	page := c.page
	def := byte(c.spec.maxDef())
	defs := page.DefinitionLevels()
	if int64(len(defs)) != page.NumValues() || bytes.Count(defs, []byte{def}) != len(defs) {
		return fmt.Errorf("column %s has a null or an empty list "+
			"(definition levels other than %d)", c.spec.name, def)
	}
	c.pageLen = len(defs)
	c.pos = 0
	if c.spec.listDepth == 0 {
		c.scalar = growValues(c.scalar, c.pageLen)
		if err := readAllValues(page, c.scalar); err != nil {
			return err
		}
		c.vals = c.scalar
		return nil
	}
	c.reps = page.RepetitionLevels()
	if len(c.reps) != c.pageLen {
		return fmt.Errorf("column %s page has %d repetition levels for %d values",
			c.spec.name, len(c.reps), c.pageLen)
	}
	if page.Dictionary() == nil && page.Type().Kind() == parquet.Float {
		data := page.Data()
		c.floats = data.Float()
	} else {
		// Arrow dictionary-encodes by default: resolve through the
		// generic path; only Arrow-written files, whestbench's, take it.
		c.dict = growValues(c.dict, c.pageLen)
		if err := readAllValues(page, c.dict); err != nil {
			return err
		}
		c.owned = c.owned[:0]
		for _, v := range c.dict {
			c.owned = append(c.owned, v.Float())
		}
		c.floats = c.owned
	}
	if len(c.floats) != c.pageLen {
		return fmt.Errorf("column %s page has %d values for %d levels",
			c.spec.name, len(c.floats), c.pageLen)
	}
	return nil
}

func growValues(buf []parquet.Value, n int) []parquet.Value {
	if cap(buf) < n {
		return make([]parquet.Value, n)
	}
	return buf[:n]
}

func readAllValues(page parquet.Page, dst []parquet.Value) error {
	got, err := page.Values().ReadValues(dst)
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if got != len(dst) {
		return fmt.Errorf("page has %d values, its header says %d", got, len(dst))
	}
	return nil
}

func (c *columnCursor) release() {
	if c.page != nil {
		parquet.Release(c.page)
		c.page = nil
	}
	c.reps = nil
	c.floats = nil
	c.vals = nil
	c.pageLen = 0
	c.pos = 0
}

// readScalar returns the next row's value of a scalar column.
func (c *columnCursor) readScalar() (parquet.Value, error) {
	if c.pos == c.pageLen {
		if err := c.nextPage(); err != nil {
			return parquet.Value{}, c.short(err)
		}
	}
	v := c.vals[c.pos]
	c.pos++
	return v, nil
}

// readList fills out with the next row's list values. strides give the
// row's nesting, as fillReps lays it out, fixed by the shape, so a byte comparison with
// the expected levels validates every list length at once.
func (c *columnCursor) readList(out []float32, strides []int) error {
	for k := 0; k < len(out); {
		if c.pos == c.pageLen {
			if err := c.nextPage(); err != nil {
				return c.short(err)
			}
		}
		m := min(len(out)-k, c.pageLen-c.pos, levelStretch)
		c.want = grow(c.want, m)
		if err := checkReps(c.spec, c.reps[c.pos:c.pos+m], c.want, k, strides); err != nil {
			return err
		}
		copy(out[k:], c.floats[c.pos:c.pos+m])
		k += m
		c.pos += m
	}
	return nil
}

// checkReps compares got, the repetition levels of values k onwards of a
// row, with the expected ones, which it writes into want, as long as got.
func checkReps(spec columnSpec, got, want []byte, k int, strides []int) error {
	fillReps(want, k, strides)
	if !bytes.Equal(got, want) {
		i := mismatch(got, want)
		return fmt.Errorf("column %s value %d has repetition level %d, expected %d "+
			"(a list of the wrong length)",
			spec.name, k+i, got[i], want[i])
	}
	return nil
}

func mismatch(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

func (c *columnCursor) short(err error) error { return shortColumn(c.spec, err) }

// shortColumn words the end of a column chunk met while reading a row.
func shortColumn(spec columnSpec, err error) error {
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("column %s has fewer values than the row count and declared shape need",
			spec.name)
	}
	return err
}

// finish checks that the chunk holds nothing beyond the rows read.
func (c *columnCursor) finish() error {
	if c.pos == c.pageLen {
		if err := c.nextPage(); !errors.Is(err, io.EOF) {
			if err != nil {
				return err
			}
		}
	}
	if c.pos != c.pageLen {
		return fmt.Errorf("column %s has values beyond the row count and declared shape",
			c.spec.name)
	}
	return nil
}

func (c *columnCursor) close() {
	c.release()
	c.pages.Close()
}

// repPattern is the repetition levels of one full row of a list column
// whose elements hold strides[j] leaf values at nesting level j, as fillReps writes it.
func repPattern(n int, strides []int) []byte {
	p := make([]byte, n)
	fillReps(p, 0, strides)
	return p
}

// fillReps writes the repetition levels of values [k, k+len(dst)) of one
// row of a list column whose elements hold strides[j] leaf values at nesting
// level j: 0 starts the row, and a value whose index is a multiple of
// strides[j], and of no outer stride, starts a new element at level j,
// which is level j+1. Readers check a row's levels a stretch at a time
// against it rather than against a whole row's, which is 16 MiB of weights
// at width 1024 × depth 16.
func fillReps(dst []byte, k int, strides []int) {
	for i := range dst {
		dst[i] = byte(len(strides))
	}
	end := k + len(dst)
	for j := len(strides) - 2; j >= 0; j-- { // outer levels overwrite inner ones
		s := strides[j]
		for p := (k + s - 1) / s * s; p < end; p += s {
			dst[p-k] = byte(j + 1)
		}
	}
	if k == 0 && len(dst) > 0 {
		dst[0] = 0
	}
}
