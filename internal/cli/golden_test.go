package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// goldenParquet holds the sha256 of every parquet file the bakes below
// write. Parquet bytes carry no timestamp, so any change here is a change of
// the product: the numpy bakes use the MLP seeds of whestbench's three
// fixture datasets, the philox bake is sliced, merged and compared with an
// unsliced bake. A change of values needs a new algorithm version, not a new
// hash; a deliberate change of the file format updates the hashes in the
// commit that makes it, saying why (last: the numpy rows'
// sampling_budget_breakdown records whestbench's CPU flop_budget, 10^15;
// values unchanged).
var goldenParquet = map[string]string{
	"mc/data/holdout-00000-of-00001.parquet":       "e92bd099a6b0f3872509a361670215bfa426f460fc84f992d9ca05fa0365426d",
	"mc/data/public-00000-of-00001.parquet":        "1d114ab892952c8950f1e984e0fb9fb36f9fa2955134f1c1f3541f3ba5da1ef2",
	"ms/data/holdout-00000-of-00001.parquet":       "a8737c64e50b2dcfb672f69dc80a28c10e150059c1e3f71495a0c51b84963de6",
	"ms/data/public-00000-of-00001.parquet":        "bf9af1b1d9c2f6807166c8f775bb7474bbe55dd88ff397ef97c0977c1f65b4de",
	"ss-public/data/public-00000-of-00001.parquet": "e50a54a2616b4900a9504c4765d208162c3e2de020e1ba67224ec8f123f5cf6c",
	"px-p0/data/public-00000-of-00001.parquet":     "5af76d5301f6f9d82740df03267cace431d8602c379808699c42a91daadbe39b",
	"px-p1/data/public-00000-of-00001.parquet":     "cd05acd1d6c48122813887a70b66145acc75cf3751742ebde0e286cdd7a5e9b9",
	"px-p2/data/public-00000-of-00001.parquet":     "502eac83be7151a709851b921897b0571219386d59ff3dce3f7886380797c9ed",
	"px-public/data/public-00000-of-00001.parquet": "93625674cfc4155c3c959a90db062ff900c7fca84f37c8129366b9e32be10f49",
	"px-whole/data/public-00000-of-00001.parquet":  "93625674cfc4155c3c959a90db062ff900c7fca84f37c8129366b9e32be10f49",
}

// goldenReport holds the sha256 of the report pages of the combined
// datasets above. The page embeds every figure, so it pins the PNG bytes
// too: a re-pushed bake is recognised as identical only while they stay
// the same. A deliberate change of the plots or of golang.org/x/image updates them
// in the commit that makes it, saying why.
var goldenReport = map[string]string{
	"mc/report/index.html": "88a6a64dc917805afe1113dbbc6bf2d5b2552d4378c6be7a508fe4ab2c959bd5",
	"ms/report/index.html": "f4285254ecde4586f8966827ed6338a0498f0d5f39a76f5830e4d6b901ccdd55",
}

// goldenPrepared holds the sha256 of the prepared Arrow folders of the
// combined datasets above (datasets' save_to_disk layout: the Arrow IPC
// stream, dataset_info.json, state.json, whose fingerprint is the stream's
// hash). Like the parquet files they carry no timestamp; a deliberate change
// of their format updates them in the commit that makes it, saying why
// (last: the numpy rows' sampling_budget_breakdown, as above).
var goldenPrepared = map[string]string{
	"mc/prepared/public/data-00000-of-00001.arrow":  "0a8181712510bb6b766a8c93979384dad26d9ee022b2b2f6b6b3770287488fba",
	"mc/prepared/public/dataset_info.json":          "8d0ce6fbc4dc8d3d69fcb668901ecea984bb846205d1b7f2238f2da1c2987af0",
	"mc/prepared/public/state.json":                 "472e703ab72ddef77f06814fc98d7fb6fe488ebfdc24b43055d83d5c16abb315",
	"mc/prepared/holdout/data-00000-of-00001.arrow": "88c3d5ca321ef37465d5a73c588c1920473e54dd8e40e57eb01dc85c5a8b8d22",
	"mc/prepared/holdout/state.json":                "ee0c439e2d5704e45892bae0c643de35d53919ec7be8f8238a42a7d144471aa3",
	"ms/prepared/public/data-00000-of-00001.arrow":  "b3d23f56f65e53d5f8c63a7a6ef7222315813ea295706ba182868af5fd49756d",
	"ms/prepared/public/dataset_info.json":          "8d20713a0e343f5982f8106295e9757218d9bf9a65b09bf935a32a57cc13352c",
	"ms/prepared/holdout/data-00000-of-00001.arrow": "7a8892a7cc5d572ca5a049614616b00f1cb105a5c8ff87fd779d2ca73c14fcee",
	"ms/prepared/holdout/state.json":                "4402693495756e5f7230504770ee107e297e73739bf80098faf2aee886958f53",
}

func TestBakesAreByteIdenticalToTheGoldenBuild(t *testing.T) {
	dir := t.TempDir()
	at := func(name string) string { return filepath.Join(dir, name) }
	seeds := func(name, list string) string { return writeFile(t, at(name+".json"), list) }
	numpy := func(out, split, n, w, list string) {
		mustRun(t, "dataset", "bake", "--n-mlps", n, "--n-samples", "100",
			"--width", w, "--depth", "2", "--mlp-seeds", seeds(out, list), "--split", split,
			"--sampler", "numpy", "--dot-product", "fma", "--threads", "1", "-o", at(out))
	}
	// The MLP seeds of multi_config_v3.0, multi_split_v3.0 and single_split_v3_protocol.
	numpy("mc-public", "public", "2", "8", "[42000,42001]")
	numpy("mc-holdout", "holdout", "2", "8", "[99000,99001]")
	numpy("ms-public", "public", "4", "4", "[2749604155,480482724,2543531098,1780620601]")
	numpy("ms-holdout", "holdout", "4", "4", "[1311118443,2895795964,3039846940,3051805348]")
	numpy("ss-public", "public", "4", "4", "[1001,2002,3003,4004]")
	mustRun(t, "dataset", "combine-splits", at("mc-public"), at("mc-holdout"), "-o", at("mc"))
	mustRun(t, "dataset", "combine-splits", at("ms-public"), at("ms-holdout"), "-o", at("ms"))

	px := seeds("px", "[5765488047046174021, 8275336682942969162, 7154437704795913393, "+
		"2077169698657866657, 2768545318656780450, 8057108420966028186]")
	philox := []string{"dataset", "bake", "--n-mlps", "6", "--n-samples", "5000",
		"--width", "16", "--depth", "3", "--mlp-seeds", px, "--split", "public"}
	for _, k := range []string{"0", "1", "2"} {
		mustRun(t, append(philox, "--slice", k+"/3", "--chunk-size", "256", "--threads", "2",
			"-o", at("px-p"+k))...)
	}
	mustRun(t, "dataset", "merge", at("px-p0"), at("px-p1"), at("px-p2"), "-o", at("px-public"))
	mustRun(t, append(philox, "--threads", "1", "-o", at("px-whole"))...)

	for rel, want := range mergeMaps(goldenParquet, goldenReport, goldenPrepared) {
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

func mergeMaps(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		maps.Copy(out, m)
	}
	return out
}
