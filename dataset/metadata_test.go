package dataset

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
	"github.com/whestbake/whestbake/dataset/internal/schematest"
)

// bake_partial.json is the key order the brief specifies, written by
// Python's json.dumps(indent=2).
func TestNewBakeMetadataMatchesPython(t *testing.T) {
	md := NewBakeMetadata(BakeInfo{
		CreatedAt: time.Date(2026, 11, 22, 10, 11, 12, 345678000, time.UTC),
		Split:     "my-custom-split",
		Config:    "full",
		TotalMLPs: 10,
		Range:     [2]int{4, 8},
		NSamples:  1_000_000_000,
		Width:     1024,
		Depth:     16,
		Hardware: Hardware{
			Hostname:        "gpu-7",
			OS:              "Linux",
			OSRelease:       "6.1.0-18-amd64",
			Platform:        "Linux-6.1.0-18-amd64-x86_64",
			Machine:         "x86_64",
			CPUBrand:        "AMD EPYC 9454 48-Core Processor",
			CPUCountLogical: 16,
			RAMTotalBytes:   137438953472,
			GoVersion:       "go1.26.8",
		},
		WhestbakeVersion: "0.1.0",
		Sampler:          "numpy",
		Engine:           "cpu",
		AlgorithmVersion: "numpy-fma-1",
		DotProduct:       "fma",
		Device:           "cpu",
		ChunkSize:        1024,
		SeedFileSHA256:   strings.Repeat("ab", 32),
	})
	got, err := md.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, "internal/pyjson/testdata/bake_partial.json")
	if string(got) != string(want) {
		t.Errorf("metadata differs from Python:\n got %s\nwant %s", got, want)
	}
	if err := Validate(md, false); err == nil {
		t.Error("a partial must be refused without allowPartial")
	}
	if err := Validate(md, true); err != nil {
		t.Errorf("partial with allowPartial: %v", err)
	}
}

func TestNewBakeMetadataCompleteBake(t *testing.T) {
	info := testInfo(bakeapi.Spec{Width: 4, Depth: 2}, 10, 0, 0)
	info.Split = ""
	info.Config = ""
	info.Driver = "550.54"
	md := NewBakeMetadata(info)
	for _, k := range []string{"is_partial", "mlp_range", "total_n_mlps", "dot_product"} {
		if md.Has(k) {
			t.Errorf("complete philox bake has %s", k)
		}
	}
	if s, _ := md.GetString("split"); s != "public" {
		t.Errorf("default split %q", s)
	}
	if c, _ := md.GetString("config"); c != "default" {
		t.Errorf("default config %q", c)
	}
	if n, _ := md.GetInt("n_mlps"); n != 10 {
		t.Errorf("n_mlps %d", n)
	}
	keys := strings.Join(md.Keys(), ",")
	if !strings.Contains(keys, "device,driver,chunk_size") {
		t.Errorf("driver not after device: %s", keys)
	}
	// [0, n) spelled out is still a complete bake (whestbench: --slice 0/1).
	info.Range = [2]int{0, 10}
	if NewBakeMetadata(info).Has("is_partial") {
		t.Error("range [0, n) marked partial")
	}
	if err := Validate(md, false); err != nil {
		t.Error(err)
	}
}

func TestISOUTCLikePython(t *testing.T) {
	for _, c := range []struct {
		when time.Time
		want string
	}{
		{time.Date(2026, 5, 26, 0, 0, 0, 0, time.UTC), "2026-05-26T00:00:00+00:00"},
		{time.Date(2026, 6, 15, 22, 19, 28, 40384000, time.UTC),
			"2026-06-15T22:19:28.040384+00:00"},
		{time.Date(2026, 6, 15, 22, 19, 28, 999, time.UTC), "2026-06-15T22:19:28+00:00"},
		{time.Date(2026, 6, 16, 0, 19, 28, 0, time.FixedZone("CEST", 2*3600)),
			"2026-06-15T22:19:28+00:00"},
	} {
		if got := isoUTC(c.when); got != c.want {
			t.Errorf("isoUTC(%v) = %s want %s", c.when, got, c.want)
		}
	}
}

func TestHostHardwareIsFilled(t *testing.T) {
	h := HostHardware()
	if h.Hostname == "" ||
		h.OS == "" ||
		h.Machine == "" ||
		h.CPUCountLogical < 1 ||
		!strings.HasPrefix(h.GoVersion, "go") {
		t.Errorf("incomplete host fingerprint %+v", h)
	}
	o := h.Object()
	wantKeys := "hostname,os,os_release,platform,machine,cpu_brand,cpu_count_logical," +
		"ram_total_bytes,go_version"
	if got := strings.Join(o.Keys(), ","); got != wantKeys {
		t.Errorf("hardware keys %s", got)
	}
	if v, _ := (Hardware{}).Object().Get("ram_total_bytes"); v != nil {
		t.Errorf("unknown RAM must be null, got %v", v)
	}
}

// whestbench's build_seed_protocol_metadata
// (https://github.com/AIcrowd/whestbench/blob/main/src/whestbench/seeds.py):
// key order name, version, kdf, salt_source, salt_digest, [salt_id], [salt];
// the salt only when published.
func TestSeedProtocolBlocks(t *testing.T) {
	shape := bakeapi.Spec{Width: 4, Depth: 2}
	const v4Block = `{"name": "whestbench_kdf_per_mlp_seeds", "version": "4.0", ` +
		`"kdf": "blake2b-keyed", `
	for _, c := range []struct {
		salt *SaltRecord
		want string
		info SeedProtocol
	}{
		{
			want: `{"name": "whestbench_explicit_per_mlp_seeds", "version": "3.0"}`,
			info: SeedProtocol{Name: SeedProtocolV3Name, Version: "3.0"},
		},
		{
			salt: &SaltRecord{Digest: testSaltDigest, Hex: testSalt},
			want: v4Block + `"salt_source": "metadata", "salt_digest": "` + testSaltDigest + `", ` +
				`"salt": "` + testSalt + `"}`,
			info: SeedProtocol{
				Name:       SeedProtocolV4Name,
				Version:    "4.0",
				SaltSource: "metadata",
				SaltDigest: testSaltDigest,
				Salt:       testSalt,
			},
		},
		{
			salt: &SaltRecord{Digest: testSaltDigest, ID: "v1", Hex: testSalt},
			want: v4Block + `"salt_source": "metadata", "salt_digest": "` + testSaltDigest + `", ` +
				`"salt_id": "v1", "salt": "` + testSalt + `"}`,
			info: SeedProtocol{
				Name:       SeedProtocolV4Name,
				Version:    "4.0",
				SaltSource: "metadata",
				SaltDigest: testSaltDigest,
				SaltID:     "v1",
				Salt:       testSalt,
			},
		},
		{
			salt: &SaltRecord{Digest: testSaltDigest, ID: "holdout-1"},
			want: v4Block + `"salt_source": "env", "salt_digest": "` + testSaltDigest + `", ` +
				`"salt_id": "holdout-1"}`,
			info: SeedProtocol{
				Name:       SeedProtocolV4Name,
				Version:    "4.0",
				SaltSource: "env",
				SaltDigest: testSaltDigest,
				SaltID:     "holdout-1",
			},
		},
	} {
		info := testInfo(shape, 3, 0, 0)
		info.Salt = c.salt
		md := NewBakeMetadata(info)
		proto, _ := md.Get("seed_protocol")
		if got := pyjson.Compact(proto); got != c.want {
			t.Errorf("seed_protocol\n got %s\nwant %s", got, c.want)
		}
		in, err := ParseInfo(md, false)
		if err != nil {
			t.Fatal(err)
		}
		if in.SeedProtocol != c.info {
			t.Errorf("Info.SeedProtocol %+v, want %+v", in.SeedProtocol, c.info)
		}
		if in.SeedProtocol.SaltWithheld() != (c.info.SaltSource == "env") {
			t.Errorf("SaltWithheld %v for %+v", in.SeedProtocol.SaltWithheld(), c.info)
		}
	}
}

// whestbench defaults an absent salt_source to "metadata".
func TestSeedProtocolDefaultSaltSource(t *testing.T) {
	in, err := ParseInfo(mustObj(t, `{`+v4Meta+`, "salt": "00ff"}, "n_mlps": 1}`), false)
	if err != nil {
		t.Fatal(err)
	}
	p := in.SeedProtocol
	if p.SaltSource != SaltSourceMetadata || p.Salt != "00ff" || p.SaltWithheld() {
		t.Errorf("%+v", p)
	}
}

// metadata.json is read up to MaxMetadataBytes: a larger file (valid JSON,
// padded) is refused, naming the file and the limit, instead of costing
// several times its size in memory.
func TestReadMetadataIsBounded(t *testing.T) {
	dir := t.TempDir()
	padding := bytes.Repeat([]byte(" "), MaxMetadataBytes)
	body := append([]byte(`{"schema_version": "3.0"}`), padding...)
	if err := os.WriteFile(filepath.Join(dir, MetadataFile), body, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ReadMetadata(dir)
	schematest.WantErr[*InvalidDatasetError](t, err,
		filepath.Join(dir, MetadataFile), "dataset.MaxMetadataBytes")
	err = os.WriteFile(filepath.Join(dir, MetadataFile), body[:MaxMetadataBytes], 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMetadata(dir); err != nil {
		t.Errorf("metadata.json of exactly MaxMetadataBytes: %v", err)
	}
}

// A metadata.json under the cap but made of empty objects would decode to a
// tree tens of times its size (about 60 times, 240 MB, for this one): its
// tokens are counted against the cap first, so it is refused, naming the
// file, having allocated a few times the file's own size in all.
func TestReadMetadataBoundsTheTreeNotOnlyTheBytes(t *testing.T) {
	dir := t.TempDir()
	body := []byte(`{"a": [` + strings.Repeat("{},", MaxMetadataBytes/3-10) + `{}]}`)
	if err := os.WriteFile(filepath.Join(dir, MetadataFile), body, 0o644); err != nil {
		t.Fatal(err)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.TotalAlloc
	_, err := ReadMetadata(dir)
	runtime.ReadMemStats(&ms)
	schematest.WantErr[*InvalidDatasetError](t, err,
		filepath.Join(dir, MetadataFile), "JSON tokens")
	if spent := ms.TotalAlloc - before; spent > 4*MaxMetadataBytes {
		t.Errorf("refusing a metadata.json of %d bytes allocated %d bytes", len(body), spent)
	}
}
