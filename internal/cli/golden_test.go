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
// commit that makes it, saying why (last: the footer made Arrow's, with
// dictionary-encoded scalar columns; values unchanged).
var goldenParquet = map[string]string{
	"mc/data/holdout-00000-of-00001.parquet":       "661210e00b25f881f9377fb999fada5254b22b073f22ab9db281cebac5d4c3a2",
	"mc/data/public-00000-of-00001.parquet":        "504f128219db8c0b2290a274c9afcb51915a14aebd9af0e0cbd6b97055677f4a",
	"ms/data/holdout-00000-of-00001.parquet":       "cea4843fffb9026df00859003fc57e5ac6626922c20286b3e796cfea353c806d",
	"ms/data/public-00000-of-00001.parquet":        "068e6c7650731d6d36b03d77d7fc37ca74678455ae3926d3b87a29dce08e6093",
	"ss-public/data/public-00000-of-00001.parquet": "89a18954e9ce42b0a1436361e0bd94a24ddd9c37f9bc4536cab0ce8617b53e61",
	"px-p0/data/public-00000-of-00001.parquet":     "ea66020d471d0a31c50bd2b1c31e22da86b2e3d6388e2ee2e58eccb53238dcfd",
	"px-p1/data/public-00000-of-00001.parquet":     "7a2ad6f76c6030868633ee01232ea066bc019e6183d9faead3ae9493b0aa5980",
	"px-p2/data/public-00000-of-00001.parquet":     "d3f2fca53f7584f32d46e9d29962ab9717040a4dabd09f0f3210d14b59fdc17e",
	"px-public/data/public-00000-of-00001.parquet": "24623af5f7ba54676b3fed3b1b38469e65f71ce8f8964ff0779796d7ce65e42f",
	"px-whole/data/public-00000-of-00001.parquet":  "24623af5f7ba54676b3fed3b1b38469e65f71ce8f8964ff0779796d7ce65e42f",
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
// (first: the prepared tree, new).
var goldenPrepared = map[string]string{
	"mc/prepared/public/data-00000-of-00001.arrow":  "fff28493ea17cecadb15f7c73e9c27e5285bc91b0b3f390976c3cb251c4e5bfb",
	"mc/prepared/public/dataset_info.json":          "8d0ce6fbc4dc8d3d69fcb668901ecea984bb846205d1b7f2238f2da1c2987af0",
	"mc/prepared/public/state.json":                 "7fafe763ff20382e771cfa7d8989a5dbb0b8e34dc94cd81c43e1310d8c5d17bc",
	"mc/prepared/holdout/data-00000-of-00001.arrow": "5566e5bb1729990cca0bd2d687c24c5a6a243f778690d5dc8b6e384b7f757637",
	"mc/prepared/holdout/state.json":                "9c82f635250d9882a3e8d28203dafb8b0efb5a8fbc0487319aa38237780740e1",
	"ms/prepared/public/data-00000-of-00001.arrow":  "018fb81b59c86a35fc9df0c8f6f15589af01acc5198770b27913d070aa2e00c7",
	"ms/prepared/public/dataset_info.json":          "8d20713a0e343f5982f8106295e9757218d9bf9a65b09bf935a32a57cc13352c",
	"ms/prepared/holdout/data-00000-of-00001.arrow": "b876a4729d5c7a26910d3b773e59414fd1cfb0a1f113f1914904a25cf8b53068",
	"ms/prepared/holdout/state.json":                "61a6c2789363005b3934c2706a5a3724dfb74def76e96eae1937c2b88efcc7b8",
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
