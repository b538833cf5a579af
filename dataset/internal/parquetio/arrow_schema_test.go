package parquetio

import (
	"encoding/base64"
	"path/filepath"
	"testing"

	"github.com/whestbake/whestbake/dataset/internal/schema"
)

// For the fixtures' shapes the Arrow schema must be pyarrow's, byte for byte.
func TestArrowSchemaMatchesFixtures(t *testing.T) {
	for _, file := range []string{
		"single_split_v3_protocol/data/public-00000-of-00001.parquet",
		"multi_split_v3.0/data/holdout-00000-of-00001.parquet",
		"multi_config_v3.0/data/public-00000-of-00001.parquet",
	} {
		pf := openParquetFile(t, filepath.Join(fixtures, file))
		want, ok := pf.Lookup(schema.ArrowSchemaKey)
		if !ok {
			t.Fatalf("%s has no %s", file, schema.ArrowSchemaKey)
		}
		w, d, err := schema.ShapeFromFeatures(mustLookup(t, pf, schema.HFMetadataKey))
		if err != nil {
			t.Fatal(err)
		}
		if got := schema.ArrowSchema(w, d); got != want {
			g, _ := base64.StdEncoding.DecodeString(got)
			x, _ := base64.StdEncoding.DecodeString(want)
			i := 0
			for i < len(g) && i < len(x) && g[i] == x[i] {
				i++
			}
			t.Errorf("%s (width %d depth %d): %d bytes, pyarrow wrote %d; "+
				"first difference at byte %d", file, w, d, len(g), len(x), i)
		}
	}
}

func mustLookup(t *testing.T, pf interface{ Lookup(string) (string, bool) }, key string) string {
	t.Helper()
	v, ok := pf.Lookup(key)
	if !ok {
		t.Fatalf("no %s key-value metadata", key)
	}
	return v
}
