package parquetio

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/whestbake/whestbake/bakeapi"
)

// decodeFooter decodes the Thrift FileMetaData of a parquet file.
func decodeFooter(t *testing.T, file []byte) *format.FileMetaData {
	t.Helper()
	if len(file) < 12 || string(file[len(file)-4:]) != "PAR1" {
		t.Fatal("not a parquet file")
	}
	n := int(binary.LittleEndian.Uint32(file[len(file)-8:]))
	meta := new(format.FileMetaData)
	footer := file[len(file)-8-n : len(file)-8]
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), footer, meta); err != nil {
		t.Fatal(err)
	}
	return meta
}

// sameFields reports each exported field of two structs of the same type
// that differs, except those named in skip.
func sameFields(t *testing.T, what string, got, want any, skip ...string) {
	t.Helper()
	g, w := reflect.ValueOf(got), reflect.ValueOf(want)
	for i := range g.NumField() {
		name := g.Type().Field(i).Name
		if slices.Contains(skip, name) {
			continue
		}
		if gf, wf := g.Field(i).Interface(), w.Field(i).Interface(); !reflect.DeepEqual(gf, wf) {
			t.Errorf("%s.%s = %+v, whestbench's file has %+v", what, name, gf, wf)
		}
	}
}

// Each fixture's rows, written by us, must give the footer parquet-cpp-arrow
// wrote for them wherever a reader looks: the schema elements field by
// field, the key-value metadata (huggingface, ARROW:schema,
// content_defined_chunking) byte for byte, and every column chunk's type,
// codec, value count, dictionary encoding, statistics and size statistics.
// What is allowed to differ is what describes our own page layout (offsets,
// sizes, data page v2 instead of v1, the order of the encodings list) and
// created_by.
func TestFooterMatchesArrowFixtures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixtures, "*", "data", "*.parquet"))
	if err != nil || len(files) != 5 {
		t.Fatalf("fixture files: %v %v", files, err)
	}
	for _, path := range files {
		rel, _ := filepath.Rel(fixtures, path)
		t.Run(rel, func(t *testing.T) {
			fixture, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			w, d, rows, err := Read(path)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := Write(&buf, bakeapi.Spec{Width: w, Depth: d}, rows); err != nil {
				t.Fatal(err)
			}
			want, got := decodeFooter(t, fixture), decodeFooter(t, buf.Bytes())

			if len(got.Schema) != len(want.Schema) {
				t.Fatalf("%d schema elements, whestbench's file has %d",
					len(got.Schema), len(want.Schema))
			}
			for i := range want.Schema {
				sameFields(t, "schema["+want.Schema[i].Name+"]", got.Schema[i], want.Schema[i])
			}
			sameFields(t, "FileMetaData", *got, *want, "Schema", "RowGroups", "CreatedBy")
			if got.CreatedBy != createdBy {
				t.Errorf("created_by %q", got.CreatedBy)
			}

			if len(got.RowGroups) != 1 || len(want.RowGroups) != 1 {
				t.Fatalf("%d and %d row groups, want one each",
					len(got.RowGroups), len(want.RowGroups))
			}
			for j, wc := range want.RowGroups[0].Columns {
				gm, wm := got.RowGroups[0].Columns[j].MetaData, wc.MetaData
				col := columns[j].name
				sameFields(t, col, gm, wm,
					"Encoding", "TotalUncompressedSize", "TotalCompressedSize", "DataPageOffset",
					"DictionaryPageOffset", "EncodingStats", "Statistics")
				sameFields(t, col+".Statistics", gm.Statistics, wm.Statistics)
				if (gm.DictionaryPageOffset == 0) != (wm.DictionaryPageOffset == 0) {
					t.Errorf("%s: dictionary page %v, whestbench's file %v",
						col, gm.DictionaryPageOffset != 0, wm.DictionaryPageOffset != 0)
				}
				gotEnc, wantEnc := sortedEncodings(gm.Encoding), sortedEncodings(wm.Encoding)
				if !slices.Equal(gotEnc, wantEnc) {
					t.Errorf("%s: encodings %v, whestbench's file %v", col, gotEnc, wantEnc)
				}
				gotPages := pageEncodings(gm.EncodingStats)
				wantPages := pageEncodings(wm.EncodingStats)
				if !slices.Equal(gotPages, wantPages) {
					t.Errorf("%s: page encodings %v, whestbench's file %v",
						col, gotPages, wantPages)
				}
			}
		})
	}
}

func sortedEncodings(e []format.Encoding) []format.Encoding {
	return slices.Sorted(slices.Values(e))
}

// pageEncodings lists a chunk's (page kind, encoding, count) with data
// pages of either version as one kind.
func pageEncodings(stats []format.PageEncodingStats) []format.PageEncodingStats {
	out := slices.Clone(stats)
	for i := range out {
		if out[i].PageType == format.DataPageV2 {
			out[i].PageType = format.DataPage
		}
	}
	return out
}
