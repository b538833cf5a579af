package dataset

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/dataset/internal/pyjson"
)

// A merge of whestbench's partials keeps what whestbench's merge keeps of
// their hosts (dataset_io.py _collapse_hardware_fingerprints): the
// versions that decide the bits (Python, numpy, whestbench, flopscope,
// torch), the GPU and the determinism flags, grouped by them, so partials
// baked with two numpy versions are two groups, not one.
func TestMergeFingerprintsKeepWhestbenchsVersions(t *testing.T) {
	parent := t.TempDir()
	parts := bakePartials(t, parent, bakeapi.Spec{Width: 4, Depth: 2}, "public",
		[]int{0, 1, 3, 4}, nil)
	for i, p := range parts {
		md, err := ReadMetadata(p)
		if err != nil {
			t.Fatal(err)
		}
		hw, _ := md.GetObject("hardware")
		hw.Set("python_version", "3.11.7").Set("numpy_version", []string{"2.4.4", "2.3.0", "2.4.4"}[i])
		md.Set("whestbench_version", "0.16.2").Set("flopscope_version", "0.12.3").
			Set("torch_version", "2.9.0").Set("cuda_device_name", "NVIDIA H200").
			Set("cuda_device_capability", []any{9, 0}).Set("cuda_driver_version", "580.1").
			Set("bake_config", NewObject().Set("cudnn_deterministic", true))
		b, _ := md.MarshalJSON()
		if err := os.WriteFile(filepath.Join(p, MetadataFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(parent, "merged")
	if err := Merge(parts, out, mergedAt); err != nil {
		t.Fatal(err)
	}
	md, _ := ReadMetadata(out)
	fps, _ := md.GetArray("hardware_fingerprints")
	if len(fps) != 2 {
		t.Fatalf("%d fingerprints, want one per numpy version", len(fps))
	}
	enc, _ := pyjson.Dumps(fps[0], false)
	want := `{"cuda_device_name": "NVIDIA H200", "cuda_device_capability": [9, 0], ` +
		`"torch_version": "2.9.0", "device": "cpu", "engine": "cpu", "cpu_brand": "cpu-x", ` +
		`"cpu_count_logical": 8, "python_version": "3.11.7", "numpy_version": "2.4.4", ` +
		`"go_version": "go1.26.8", "os": "Linux", "whestbench_version": "0.16.2", ` +
		`"flopscope_version": "0.12.3", "whestbake_version": "0.1.0", ` +
		`"bake_config": {"cudnn_deterministic": true}, "mlp_count": 2, "partials_count": 2, ` +
		`"drivers_seen": ["580.1"], "kernels_seen": ["6.1"], "representative_hostnames": ["host-a"]}`
	if string(enc) != want {
		t.Errorf("fingerprint\n got %s\nwant %s", enc, want)
	}
}
