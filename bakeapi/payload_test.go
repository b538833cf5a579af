package bakeapi

import (
	"bytes"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// -update rewrites testdata/payloads.golden.json from payloadSamples. Do it
// only for a change that keeps recorded histories decoding (docs/ARCHITECTURE.md,
// "Safe upgrades"), and say in the commit why the JSON may change.
var updatePayloads = flag.Bool("update", false, "rewrite testdata/payloads.golden.json")

const payloadGolden = "testdata/payloads.golden.json"

// payloadSamples is one fully populated value of every type that travels
// through Temporal: workflow and activity inputs and outputs (recorded in
// histories), the cursor a split continues as new with, a stopped slice's
// failure detail, BakeSlice's heartbeat detail and the progress queries'
// answers. Every field, nested ones included, is non-zero
// (TestPayloadSamplesAreFull), so that no field's JSON name or encoding can
// change without changing the golden file.
func payloadSamples() map[string]any {
	seed := uint64(42)
	at := time.Date(2025, 3, 4, 5, 6, 7, 8000, time.UTC)
	spec := Spec{
		Width:        100,
		Depth:        4,
		NSamples:     1 << 20,
		Sampler:      SamplerNumpy,
		Dot:          DotMulAdd,
		ChunkSize:    4096,
		SeedProtocol: SeedProtocolV4,
		Salt:         Salt{SHA256: strings.Repeat("ab", 32), Withhold: true, ID: "salt-2025"},
		Precision:    PrecisionTF32x3,
	}
	split := SplitSpec{
		Name:        "public",
		Config:      "default",
		NMLPs:       1000,
		Seed:        &seed,
		SeedsKey:    "bakes/b1/inputs/public-seeds.json",
		Fingerprint: "sha256:split",
	}
	hub := HubSpec{
		Repo:     "owner/data",
		Revision: "dev",
		Tag:      "v1",
		Message:  "bake b1",
		Endpoint: "https://hub.example",
		Private:  true,
		Replace:  true,
	}
	policy := Policy{
		SeedsTimeout:        Duration(time.Minute),
		SliceTimeout:        Duration(time.Hour),
		SliceHeartbeat:      Duration(2 * time.Minute),
		SliceMaxAttempts:    20,
		MergeTimeout:        Duration(3 * time.Hour),
		PushTimeout:         Duration(4 * time.Hour),
		RetryInitial:        Duration(5 * time.Second),
		RetryMax:            Duration(6 * time.Minute),
		OtherMaxAttempts:    7,
		FilesystemHeartbeat: Duration(8 * time.Minute),
	}
	seeds := GenerateSeedsOutput{
		SeedsKey: "bakes/b1/seeds/public.json",
		SHA256:   "sha256:seeds",
		NMLPs:    1000,
		Merged:   true,
	}
	splitProgress := SplitProgress{
		Split:         "public",
		Stage:         StageBaking,
		MLPsDone:      10,
		MLPsTotal:     1000,
		SlicesDone:    1,
		SlicesTotal:   100,
		SlicesRunning: 4,
		MaxInFlight:   4,
		StartedAt:     at,
		ETA:           at.Add(time.Hour),
	}
	return map[string]any{
		"BakeInput": BakeInput{
			BakeParams: BakeParams{
				BakeID:            "b1",
				Spec:              spec,
				SliceSize:         10,
				MaxInFlight:       4,
				GPUQueue:          "gpu-a100",
				Policy:            policy,
				CreatedAt:         at,
				KeepIntermediates: true,
			},
			Splits:       []SplitSpec{split},
			DefaultSplit: "public",
			Release: ReleaseSpec{
				Bucket: "releases",
				Prefix: "p",
				Name:   "n",
				Tag:    "t",
			},
			Hub: &hub,
		},
		"BakeOutput": BakeOutput{
			DatasetPrefix:  "bakes/b1/dataset",
			ManifestSHA256: "sha256:manifest",
			ReleaseURI:     "s3://releases/p/n/t",
			HubURL:         "https://hub.example/datasets/owner/data",
			HubCommit:      "c0ffee",
		},
		"SplitInput": SplitInput{
			BakeParams: BakeParams{
				BakeID:            "b1",
				Spec:              spec,
				SliceSize:         10,
				MaxInFlight:       4,
				GPUQueue:          "gpu-a100",
				Policy:            policy,
				CreatedAt:         at,
				KeepIntermediates: true,
			},
			Split: split,
			Seeds: seeds,
			Cursor: &SplitCursor{
				Next:      7,
				Runs:      2,
				StartedAt: at,
				Stopped:   []StoppedSlice{{Slice: 3, Spent: 1, Stops: 2}},
			},
		},
		"SplitOutput": SplitOutput{NMLPs: 1000, Slices: 100},
		"SliceStop":   SliceStop{Attempt: 3, Saved: true},
		"GenerateSeedsInput": GenerateSeedsInput{
			BakeID:       "b1",
			Split:        "public",
			NMLPs:        1000,
			Seed:         &seed,
			UploadedKey:  "bakes/b1/inputs/public-seeds.json",
			SeedProtocol: SeedProtocolV4,
		},
		"GenerateSeedsOutput": seeds,
		"BakeSliceInput": BakeSliceInput{
			BakeID:      "b1",
			Split:       "public",
			Config:      "default",
			Slice:       3,
			Start:       30,
			End:         40,
			NMLPs:       1000,
			SeedsKey:    "bakes/b1/seeds/public.json",
			SeedsSHA256: "sha256:seeds",
			Spec:        spec,
			Fingerprint: "sha256:split",
			CreatedAt:   at,
		},
		"BakeSliceOutput": BakeSliceOutput{
			Prefix:         "bakes/b1/slices/public/3",
			ManifestSHA256: "sha256:slice",
			Computed:       4,
			Resumed:        3,
			Reused:         2,
			Discarded:      1,
		},
		"NameSplitInput": NameSplitInput{
			BakeID:      "b1",
			Split:       "public",
			NMLPs:       1000,
			SeedsKey:    "bakes/b1/seeds/public.json",
			SeedsSHA256: "sha256:seeds",
			Salt:        spec.Salt,
		},
		"NameSplitOutput": NameSplitOutput{Blocks: 1},
		"SliceProgress": SliceProgress{
			Split:       "public",
			Slice:       3,
			DoneMLPs:    2,
			TotalMLPs:   10,
			CurrentMLP:  32,
			SamplesDone: 1 << 10,
			SamplesEach: 1 << 20,
			Discarded:   1,
		},
		"MergeSplitInput": MergeSplitInput{
			BakeID:            "b1",
			Split:             "public",
			NMLPs:             1000,
			NSlices:           100,
			CreatedAt:         at,
			KeepIntermediates: true,
		},
		"MergeSplitOutput": MergeSplitOutput{
			Prefix:         "bakes/b1/merged/public",
			ManifestSHA256: "sha256:merged",
			NMLPs:          1000,
		},
		"CombineSplitsInput": CombineSplitsInput{
			BakeID:            "b1",
			Splits:            []string{"bakes/b1/merged/public"},
			DefaultSplit:      "public",
			KeepIntermediates: true,
		},
		"CombineSplitsOutput": CombineSplitsOutput{
			Prefix:         "bakes/b1/dataset",
			ManifestSHA256: "sha256:manifest",
			Files:          5,
		},
		"PushInput": PushInput{
			DatasetPrefix: "bakes/b1/dataset",
			Bucket:        "releases",
			Prefix:        "p",
			Name:          "n",
			Tag:           "t",
		},
		"PushOutput": PushOutput{
			URI:            "s3://releases/p/n/t",
			ManifestSHA256: "sha256:manifest",
		},
		"HubPushInput": HubPushInput{DatasetPrefix: "bakes/b1/dataset", Hub: hub},
		"HubPushOutput": HubPushOutput{
			Commit:  "c0ffee",
			URL:     "https://hub.example/datasets/owner/data",
			NoOp:    true,
			Sent:    3,
			Reused:  2,
			Deleted: 1,
		},
		"GPUWorkersInput":  GPUWorkersInput{Queue: "gpu-a100"},
		"GPUWorkersOutput": GPUWorkersOutput{Workers: 4},
		"SplitProgress":    splitProgress,
		"BakeProgress": BakeProgress{
			BakeID: "b1",
			Stage:  StageBaking,
			Splits: []SplitProgress{splitProgress},
		},
	}
}

// TestPayloadJSONIsPinned: the JSON of every payload is part of recorded
// histories and of the workers of other versions that read them. A change
// here must be one that every recorded history still decodes under (new
// fields optional, old names kept as JSON tags), made on purpose with
// -update.
func TestPayloadJSONIsPinned(t *testing.T) {
	samples := payloadSamples()
	got := map[string]json.RawMessage{}
	for name, v := range samples {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got[name] = canonical(t, name, b)
	}
	data, err := json.MarshalIndent(got, "", "  ") // every object's keys sorted: a stable file
	if err != nil {
		t.Fatal(err)
	}
	data = append(data, '\n')
	if *updatePayloads {
		if err := os.MkdirAll(filepath.Dir(payloadGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(payloadGolden, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(payloadGolden)
	if err != nil {
		t.Fatalf(
			"%v (run go test ./bakeapi/ -run TestPayloadJSONIsPinned -update to write it)",
			err,
		)
	}
	var wantBy map[string]json.RawMessage
	if err := json.Unmarshal(want, &wantBy); err != nil {
		t.Fatalf("%s: %v", payloadGolden, err)
	}
	for name := range samples {
		if _, ok := wantBy[name]; !ok {
			t.Errorf("%s is not in %s", name, payloadGolden)
		}
	}
	for name, w := range wantBy {
		g, ok := got[name]
		if !ok {
			t.Errorf("%s is in %s but no longer a payload sample", name, payloadGolden)
			continue
		}
		if w := canonical(t, payloadGolden+": "+name, w); !bytes.Equal(w, g) {
			t.Errorf(
				"the JSON of %s changed: recorded histories hold the old form\n got: %s\nwant: %s",
				name,
				g,
				w,
			)
		}
	}
}

// canonical is b with its object keys sorted and no spaces: what a JSON
// decoder sees, which is the contract (the order of a struct's fields, and
// so of its keys, is not: Go's decoder and Temporal's ignore it).
func canonical(t *testing.T, what string, b []byte) []byte {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber() // numbers keep their literal form
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return out
}

// TestEveryPayloadHasASample: each Input and Output type of the contract
// is in payloadSamples, so a new activity's payload is pinned from its start.
func TestEveryPayloadHasASample(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	samples := payloadSamples()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				name := s.(*ast.TypeSpec).Name.Name
				if !strings.HasSuffix(name, "Input") && !strings.HasSuffix(name, "Output") {
					continue
				}
				if _, ok := samples[name]; !ok {
					t.Errorf(
						"%s has no sample in payloadSamples: "+
							"add a fully populated one and run -update",
						name,
					)
				}
			}
		}
	}
}

// TestPayloadsDecodeFromGolden: the pinned JSON decodes back to the very
// value it was written from, so no field is dropped on the way back (an
// unexported or json:"-" field, a tag shared by two fields).
func TestPayloadsDecodeFromGolden(t *testing.T) {
	want, err := os.ReadFile(payloadGolden)
	if err != nil {
		t.Fatal(err)
	}
	var golden map[string]json.RawMessage
	if err := json.Unmarshal(want, &golden); err != nil {
		t.Fatal(err)
	}
	for name, v := range payloadSamples() {
		p := reflect.New(reflect.TypeOf(v))
		if err := json.Unmarshal(golden[name], p.Interface()); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := p.Elem().Interface(); !reflect.DeepEqual(got, v) {
			t.Errorf("%s decodes from %s as\n%+v\nwant\n%+v", name, payloadGolden, got, v)
		}
	}
}

// TestPayloadSamplesAreFull: a field left zero in a sample would hide its
// JSON (omitempty) from the golden file, so a new field fails here until
// the sample sets it.
func TestPayloadSamplesAreFull(t *testing.T) {
	for name, v := range payloadSamples() {
		for _, path := range zeroFields(reflect.ValueOf(v), name) {
			t.Errorf(
				"%s is zero in the sample: set it, so that the golden file pins its JSON",
				path,
			)
		}
	}
}

// zeroFields lists the zero fields of v, descending into structs (but not
// time.Time), pointers and the elements of slices.
func zeroFields(v reflect.Value, path string) []string {
	if v.IsZero() {
		return []string{path}
	}
	switch v.Kind() {
	case reflect.Pointer:
		return zeroFields(v.Elem(), path)
	case reflect.Slice:
		var out []string
		for i := range v.Len() {
			out = append(out, zeroFields(v.Index(i), path+"[]")...)
		}
		return out
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			return nil
		}
		var out []string
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.Anonymous {
				out = append(out, zeroFields(v.Field(i), path)...)
				continue
			}
			out = append(out, zeroFields(v.Field(i), path+"."+f.Name)...)
		}
		return out
	}
	return nil
}
