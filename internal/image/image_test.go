package image

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ociIndex, ociManifest and ociConfig are the parts of the OCI image
// layout the test reads, by the image-spec's field names, with its own
// reader rather than go-containerregistry's.
type ociIndex struct {
	Manifests []ociDescriptor `json:"manifests"`
}

type ociDescriptor struct {
	MediaType   string            `json:"mediaType"`
	Digest      string            `json:"digest"`
	Size        int64             `json:"size"`
	Annotations map[string]string `json:"annotations"`
}

type ociManifest struct {
	MediaType string          `json:"mediaType"`
	Config    ociDescriptor   `json:"config"`
	Layers    []ociDescriptor `json:"layers"`
}

type ociConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Created      string `json:"created"`
	Config       struct {
		User         string              `json:"User"`
		Entrypoint   []string            `json:"Entrypoint"`
		Cmd          []string            `json:"Cmd"`
		Labels       map[string]string   `json:"Labels"`
		ExposedPorts map[string]struct{} `json:"ExposedPorts"`
	} `json:"config"`
	RootFS struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// The control image, built without a container engine: the same inputs
// give the same digest twice; its config runs whestbake-worker as the
// non-root user with the Dockerfile's command and the commit's labels; its
// layers hold the binaries and the base files; and the worker and the
// starter run from the image's root filesystem alone.
func TestControlImage(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries; not under -short")
	}
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bins, err := Binaries(src, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	in := Input{
		Binaries: bins,
		Revision: "0123456789abcdef0123456789abcdef01234567",
		Created:  time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		Version:  "9.8.7",
	}
	dirs := []string{filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")}
	var digests []string
	for _, d := range dirs {
		in.Dir = d
		h, err := Build(in)
		if err != nil {
			t.Fatal(err)
		}
		digests = append(digests, h.String())
	}
	if digests[0] != digests[1] {
		t.Errorf("two builds of the same inputs: digests %s and %s", digests[0], digests[1])
	}
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a build over an existing layout: %v, want a refusal", err)
	}

	m, cfg := readLayout(t, dirs[0], digests[0])
	checkConfig(t, cfg, in)
	root := filepath.Join(t.TempDir(), "rootfs")
	for i, l := range m.Layers {
		if l.MediaType != "application/vnd.oci.image.layer.v1.tar+gzip" {
			t.Errorf("layer %d is %s, want an OCI gzip layer", i, l.MediaType)
		}
		if diff := extract(t, blob(t, dirs[0], l.Digest), root); diff != cfg.RootFS.DiffIDs[i] {
			t.Errorf("layer %d unpacks to %s, its config says %s", i, diff, cfg.RootFS.DiffIDs[i])
		}
	}
	checkRootFS(t, root)
	runFromRootFS(t, root)
}

// readLayout reads the layout's one image, checking each blob's digest.
func readLayout(t *testing.T, dir, digest string) (ociManifest, ociConfig) {
	t.Helper()
	var idx ociIndex
	decode(t, readFile(t, filepath.Join(dir, "index.json")), &idx)
	if layout := string(readFile(t, filepath.Join(dir, "oci-layout"))); !strings.Contains(layout, `"imageLayoutVersion"`) {
		t.Errorf("oci-layout: %s", layout)
	}
	if len(idx.Manifests) != 1 || idx.Manifests[0].Digest != digest ||
		idx.Manifests[0].MediaType != "application/vnd.oci.image.manifest.v1+json" ||
		idx.Manifests[0].Annotations["org.opencontainers.image.ref.name"] != "whestbake-control:9.8.7" {
		t.Fatalf("index.json lists %+v, want the one OCI manifest %s", idx.Manifests, digest)
	}
	var m ociManifest
	decode(t, blob(t, dir, digest), &m)
	if len(m.Layers) != 2 || m.Config.MediaType != "application/vnd.oci.image.config.v1+json" {
		t.Fatalf("manifest: %+v, want an OCI config and 2 layers", m)
	}
	var cfg ociConfig
	decode(t, blob(t, dir, m.Config.Digest), &cfg)
	return m, cfg
}

func checkConfig(t *testing.T, cfg ociConfig, in Input) {
	t.Helper()
	c := cfg.Config
	if c.User != "65532:65532" || strings.HasPrefix(c.User, "0") {
		t.Errorf("the image runs as %q, want the non-root 65532:65532", c.User)
	}
	if !reflect.DeepEqual(c.Entrypoint, []string{"/usr/local/bin/whestbake-worker"}) ||
		strings.Join(c.Cmd, " ") != "--role control --config-file /etc/whestbake/config.yaml "+
			"--log-format json --metrics-listen :9464" {
		t.Errorf("entrypoint %q, cmd %q: want the Dockerfile's control target's", c.Entrypoint, c.Cmd)
	}
	if _, ok := c.ExposedPorts["9464/tcp"]; !ok || cfg.OS != "linux" || cfg.Architecture != "amd64" {
		t.Errorf("ports %v, platform %s/%s", c.ExposedPorts, cfg.OS, cfg.Architecture)
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.revision": in.Revision,
		"org.opencontainers.image.version":  in.Version,
		"org.opencontainers.image.created":  "2026-03-04T05:06:07Z",
		"org.opencontainers.image.source":   "https://github.com/whestbake/whestbake",
		"org.opencontainers.image.title":    "whestbake-control",
	} {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	if !strings.HasPrefix(cfg.Created, "2026-03-04T05:06:07") || len(cfg.RootFS.DiffIDs) != 2 {
		t.Errorf("created %s, %d diff IDs", cfg.Created, len(cfg.RootFS.DiffIDs))
	}
}

// checkRootFS: the files the worker needs, owned and moded as a container
// runtime will give them.
func checkRootFS(t *testing.T, root string) {
	t.Helper()
	for path, mode := range map[string]os.FileMode{
		"usr/local/bin/whestbake-worker": 0o755,
		"usr/local/bin/whestbake":        0o755,
		"etc/passwd":                     0o644,
		"home/nonroot":                   os.ModeDir | 0o700,
		"tmp":                            os.ModeDir | os.ModeSticky | 0o777,
	} {
		fi, err := os.Lstat(filepath.Join(root, path))
		if err != nil {
			t.Errorf("the image has no /%s: %v", path, err)
			continue
		}
		if fi.Mode() != mode {
			t.Errorf("/%s has mode %v, want %v", path, fi.Mode(), mode)
		}
	}
	if !strings.Contains(string(readFile(t, filepath.Join(root, "etc", "passwd"))),
		"nonroot:x:65532:65532:") {
		t.Error("/etc/passwd has no nonroot user 65532")
	}
}

// runFromRootFS runs both binaries' --help inside the image's root
// filesystem: chrooted into it where the test may (as root), so that
// nothing of the host's filesystem helps, else from it.
func runFromRootFS(t *testing.T, root string) {
	t.Helper()
	for _, name := range []string{"whestbake-worker", "whestbake"} {
		cmd := exec.Command(filepath.Join(root, "usr", "local", "bin", name), "--help")
		if os.Geteuid() == 0 {
			cmd = exec.Command("/usr/local/bin/"+name, "--help")
			cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root,
				Credential: &syscall.Credential{Uid: 65532, Gid: 65532}}
			cmd.Dir = "/"
		}
		cmd.Env = []string{"PATH=/usr/local/bin"}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "Usage:") {
			t.Errorf("%s --help from the image's root filesystem: %v\n%s", name, err, out)
		}
	}
	if os.Geteuid() != 0 {
		t.Log("not root: ran the binaries from the image's files, not chrooted into them")
	}
}

// extract unpacks a gzipped tar layer into root and returns its diff ID,
// the sha256 of the uncompressed tar.
func extract(t *testing.T, gz []byte, root string) string {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(gz)))
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	tr := tar.NewReader(io.TeeReader(zr, h))
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(root, filepath.FromSlash(hdr.Name))
		if !strings.HasPrefix(path, root+string(filepath.Separator)) {
			t.Fatalf("layer entry %q leaves the root", hdr.Name)
		}
		mode := os.FileMode(hdr.Mode).Perm()
		if hdr.Mode&0o1000 != 0 {
			mode |= os.ModeSticky
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
		case tar.TypeReg:
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("layer entry %q has type %c", hdr.Name, hdr.Typeflag)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			if err := os.Lchown(path, hdr.Uid, hdr.Gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := io.Copy(io.Discard, tr); err != nil {
		t.Fatal(err)
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// blob is a blob of the layout, checked against its digest.
func blob(t *testing.T, dir, digest string) []byte {
	t.Helper()
	hexd, ok := strings.CutPrefix(digest, "sha256:")
	if !ok {
		t.Fatalf("digest %s is not sha256", digest)
	}
	data := readFile(t, filepath.Join(dir, "blobs", "sha256", hexd))
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hexd {
		t.Fatalf("blob %s does not hash to its name", digest)
	}
	return data
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func decode(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}
