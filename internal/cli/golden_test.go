package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
)

// goldenParquet holds the sha256 of every parquet file the bakes below wrote
// with the build before the package layout changed (commit 6fe8c79). Parquet
// bytes carry no timestamp, so any change here is a change of the product:
// the numpy bakes use the MLP seeds of whestbench's three fixture datasets,
// the philox bake is sliced, merged and compared with an unsliced bake.
// A deliberate change of bytes needs a new algorithm version, not a new hash.
var goldenParquet = map[string]string{
	"mc/data/holdout-00000-of-00001.parquet":       "ab8fa27174c74dc0dc2debfcad315a9f5d16c3e4da9d4579ab79846acbcffe40",
	"mc/data/public-00000-of-00001.parquet":        "b2d5a5d8dcbd398da41fec22154ed492dcbb371876d3bd158317fdd741218dc8",
	"ms/data/holdout-00000-of-00001.parquet":       "c0a1874dae4788131262dc17b0437742eab8b338fecd5837eba9c5b0e2bf6fed",
	"ms/data/public-00000-of-00001.parquet":        "4274193201fe3d922505a7e7f49e98102feaa858a90b88de7effe34b4d973b88",
	"ss-public/data/public-00000-of-00001.parquet": "1b5199be2f7f6cfb7c76c7d3f832ff8a48f0b65e85d552ae39a9fcee21e3be22",
	"px-p0/data/public-00000-of-00001.parquet":     "36dc68b59d4b52906026eb4b10051c7efecec4e2d8ce3fe445ba97acfef84c27",
	"px-p1/data/public-00000-of-00001.parquet":     "dbfd7c357fa6b95f620d6d0c9098e903cdbb22612c5c05b3c818f1135e417c7b",
	"px-p2/data/public-00000-of-00001.parquet":     "135e3633c0b51436279768bde97abbf3e83c69a8bd8257110db96e5ad0ab77dc",
	"px-public/data/public-00000-of-00001.parquet": "14b5bca4dc0362ce100118234050b3af478b96461d58c60d8bc428f9ddf76b3b",
	"px-whole/data/public-00000-of-00001.parquet":  "14b5bca4dc0362ce100118234050b3af478b96461d58c60d8bc428f9ddf76b3b",
}

func TestBakesAreByteIdenticalToTheGoldenBuild(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	seeds := func(name, list string) string { return writeFile(t, at(name+".json"), list) }
	numpy := func(out, split, n, w, list string) {
		mustRun(t, "dataset", "bake", "--n-mlps", n, "--n-samples", "100", "--width", w, "--depth", "2",
			"--mlp-seeds", seeds(out, list), "--split", split, "--sampler", "numpy", "--dot-product", "fma", "--threads", "1", "-o", at(out))
	}
	// The MLP seeds of multi_config_v3.0, multi_split_v3.0 and single_split_v3_protocol.
	numpy("mc-public", "public", "2", "8", "[42000,42001]")
	numpy("mc-holdout", "holdout", "2", "8", "[99000,99001]")
	numpy("ms-public", "public", "4", "4", "[2749604155,480482724,2543531098,1780620601]")
	numpy("ms-holdout", "holdout", "4", "4", "[1311118443,2895795964,3039846940,3051805348]")
	numpy("ss-public", "public", "4", "4", "[1001,2002,3003,4004]")
	mustRun(t, "dataset", "combine-splits", at("mc-public"), at("mc-holdout"), "-o", at("mc"))
	mustRun(t, "dataset", "combine-splits", at("ms-public"), at("ms-holdout"), "-o", at("ms"))

	px := seeds("px", "[5765488047046174021, 8275336682942969162, 7154437704795913393, 2077169698657866657, 2768545318656780450, 8057108420966028186]")
	philox := []string{"dataset", "bake", "--n-mlps", "6", "--n-samples", "5000", "--width", "16", "--depth", "3", "--mlp-seeds", px, "--split", "public"}
	for _, k := range []string{"0", "1", "2"} {
		mustRun(t, append(philox, "--slice", k+"/3", "--chunk-size", "256", "--threads", "2", "-o", at("px-p"+k))...)
	}
	mustRun(t, "dataset", "merge", at("px-p0"), at("px-p1"), at("px-p2"), "-o", at("px-public"))
	mustRun(t, append(philox, "--threads", "1", "-o", at("px-whole"))...)

	for rel, want := range goldenParquet {
		data, err := os.ReadFile(at(rel))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		if got := hex.EncodeToString(sum[:]); got != want {
			t.Errorf("%s: sha256 %s, golden %s", rel, got, want)
		}
	}
}
