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
// commit that makes it, saying why (last: sampling_budget_breakdown's note
// says its times are 0, as they are; values unchanged).
var goldenParquet = map[string]string{
	"mc/data/holdout-00000-of-00001.parquet":       "f7dceafe084759c79b484e3cf6cf0b0ad427443f77ef7b3a1194addf26744313",
	"mc/data/public-00000-of-00001.parquet":        "5a00548e5c797e9484b01bc811ef444dd556f516b2e5699ac86d783cf814bb81",
	"ms/data/holdout-00000-of-00001.parquet":       "3529f8a158bdc77687031dc81d19a33ef446266038092f75de288e4884530746",
	"ms/data/public-00000-of-00001.parquet":        "d8ab7cc8837b6408122977a9da9463afbb211a20853d238ee6e3c9f3fdbc2516",
	"ss-public/data/public-00000-of-00001.parquet": "004a2740091ab10e8ce2c244016488a7b4a6504e4c4210d2a819c014295118e4",
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
// (last: the rows' sampling_budget_breakdown note, as above).
var goldenPrepared = map[string]string{
	"mc/prepared/public/data-00000-of-00001.arrow":  "d7441621c52df2406cdc5428a25a20884c10bfb1d5d5e347c619fd4b5a3a893e",
	"mc/prepared/public/dataset_info.json":          "8d0ce6fbc4dc8d3d69fcb668901ecea984bb846205d1b7f2238f2da1c2987af0",
	"mc/prepared/public/state.json":                 "4b7f9435d4bde78663eac7c51d6fb57447a9f877102416402f576f0229dabab8",
	"mc/prepared/holdout/data-00000-of-00001.arrow": "a818fd515c787ab84d14cc823994e242371daa2ce7224f24acf23786396c9d78",
	"mc/prepared/holdout/state.json":                "6b203bee051e0e0a7eae5d44b4d1e053a4f4218a23c45853c45dc874791b9d8d",
	"ms/prepared/public/data-00000-of-00001.arrow":  "d66af0f13ae30af531d384a9a347bacbcdea0038d68fb4f931002ee10445354b",
	"ms/prepared/public/dataset_info.json":          "8d20713a0e343f5982f8106295e9757218d9bf9a65b09bf935a32a57cc13352c",
	"ms/prepared/holdout/data-00000-of-00001.arrow": "9037e62d462ea21ecf77a9118e953328667e6ab39f2694a1504b1764886c29e3",
	"ms/prepared/holdout/state.json":                "44b9cf91edbd6484487f9c628bd513282cb16b0997c978cab3802e462ae96c58",
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
