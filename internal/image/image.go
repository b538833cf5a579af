// Package image builds whestbake's control image without a container
// engine, the way Go services are built with ko: the cgo-free binaries
// laid on an empty base as OCI layers by go-containerregistry's
// pkg/v1/mutate and pkg/v1/layout, written as an OCI image layout that
// `skopeo copy oci:DIR docker://REGISTRY/NAME` or `crane push DIR` pushes.
// Every byte follows from the binaries and the commit: file times are the
// commit's, owners and modes fixed, so a commit builds the same digest
// every time. deploy/container/Dockerfile's control target is the other
// way, which needs a Docker engine and a registry's base image.
package image

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// The image's user: distroless's nonroot, which the Kubernetes manifests
// run as with runAsUser 65532.
const (
	UID  = 65532
	User = "65532:65532"
)

// Bin is where the binaries go, on the image's PATH.
const Bin = "/usr/local/bin"

// Input is what one image is made of.
type Input struct {
	// Binaries are the files to install in Bin, by name: whestbake-worker,
	// the entrypoint, and whestbake.
	Binaries map[string]string
	// Revision and Created are the commit's: its hash, and its time, which
	// every file and the config carry so that the digest is the commit's.
	Revision string
	Created  time.Time
	Version  string // whestbake's version, internal/version.Version
	// Dir is the OCI image layout to write; it must not exist.
	Dir string
}

// Entrypoint and Cmd are the Dockerfile's control target's.
var (
	Entrypoint = []string{Bin + "/whestbake-worker"}
	Cmd        = []string{"--role", "control", "--config-file", "/etc/whestbake/config.yaml",
		"--log-format", "json", "--metrics-listen", ":9464"}
)

// Source is where the image says its code lives.
const Source = "https://github.com/whestbake/whestbake"

// Build writes the image of in as an OCI image layout at in.Dir and
// returns its manifest's digest. It is written beside in.Dir and renamed
// into place, so a failed build leaves nothing.
func Build(in Input) (v1.Hash, error) {
	if _, err := os.Lstat(in.Dir); err == nil {
		return v1.Hash{}, fmt.Errorf("%s exists: remove it or choose another output", in.Dir)
	}
	img, err := image(in)
	if err != nil {
		return v1.Hash{}, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(in.Dir), "."+filepath.Base(in.Dir)+".tmp-")
	if err != nil {
		return v1.Hash{}, err
	}
	defer os.RemoveAll(tmp)
	p, err := layout.Write(tmp, empty.Index)
	if err != nil {
		return v1.Hash{}, err
	}
	ref := map[string]string{"org.opencontainers.image.ref.name": "whestbake-control:" + in.Version}
	if err := p.AppendImage(img, layout.WithAnnotations(ref)); err != nil {
		return v1.Hash{}, err
	}
	digest, err := img.Digest()
	if err != nil {
		return v1.Hash{}, err
	}
	return digest, os.Rename(tmp, in.Dir)
}

// image is the OCI image of in: a base layer with the nonroot user and
// /tmp, and the binaries' layer on an empty base, and its config.
func image(in Input) (v1.Image, error) {
	base, err := layer(baseFiles(), in.Created)
	if err != nil {
		return nil, err
	}
	bins, err := binaryFiles(in.Binaries)
	if err != nil {
		return nil, err
	}
	top, err := layer(bins, in.Created)
	if err != nil {
		return nil, err
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	for _, l := range []struct {
		layer v1.Layer
		by    string
	}{{base, "the nonroot user and /tmp"}, {top, "whestbake-worker and whestbake"}} {
		img, err = mutate.Append(img, mutate.Addendum{
			Layer:     l.layer,
			MediaType: types.OCILayer,
			History:   v1.History{Created: v1.Time{Time: in.Created}, CreatedBy: l.by},
		})
		if err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.Created = v1.Time{Time: in.Created}
	cf.Architecture, cf.OS = "amd64", "linux"
	cf.Config = v1.Config{
		User:         User,
		Entrypoint:   Entrypoint,
		Cmd:          Cmd,
		Env:          []string{"PATH=" + Bin + ":/usr/bin:/bin"},
		WorkingDir:   "/home/nonroot",
		ExposedPorts: map[string]struct{}{"9464/tcp": {}},
		Labels:       Labels(in),
	}
	return mutate.ConfigFile(img, cf)
}

// Labels are the OCI annotations of the image's config.
func Labels(in Input) map[string]string {
	return map[string]string{
		"org.opencontainers.image.title":       "whestbake-control",
		"org.opencontainers.image.description": "whestbake's control worker and starter (cgo-free)",
		"org.opencontainers.image.source":      Source,
		"org.opencontainers.image.revision":    in.Revision,
		"org.opencontainers.image.version":     in.Version,
		"org.opencontainers.image.created":     in.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.licenses":    "MIT",
	}
}

// file is one entry of a layer.
type file struct {
	name     string
	mode     int64
	uid      int
	data     []byte // nil for a directory
	isDir    bool
	fromPath string // a file's content on the host, read when the layer is
}

// baseFiles are what distroless's static base gives a Go binary and this
// one needs: the nonroot user 65532 and its home, and a /tmp for the
// worker's scratch files, worker.scratch-dir's default. TLS roots are in
// the binaries, from golang.org/x/crypto/x509roots/fallback.
func baseFiles() []file {
	return []file{
		{name: "etc/", isDir: true, mode: 0o755},
		{name: "etc/group", mode: 0o644, data: []byte("root:x:0:\nnonroot:x:65532:\n")},
		{name: "etc/passwd", mode: 0o644, data: []byte(
			"root:x:0:0:root:/root:/sbin/nologin\n" +
				"nonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n")},
		{name: "home/", isDir: true, mode: 0o755},
		{name: "home/nonroot/", isDir: true, mode: 0o700, uid: UID},
		{name: "tmp/", isDir: true, mode: 0o1777},
	}
}

// binaryFiles are the binaries in Bin, in name order.
func binaryFiles(bins map[string]string) ([]file, error) {
	files := []file{{name: "usr/", isDir: true, mode: 0o755},
		{name: "usr/local/", isDir: true, mode: 0o755},
		{name: "usr/local/bin/", isDir: true, mode: 0o755}}
	for _, name := range []string{"whestbake-worker", "whestbake"} {
		path, ok := bins[name]
		if !ok {
			return nil, fmt.Errorf("no %s to put in the image", name)
		}
		files = append(files, file{name: "usr/local/bin/" + name, mode: 0o755, fromPath: path})
	}
	if len(bins) != 2 {
		return nil, fmt.Errorf("the image holds whestbake-worker and whestbake, not %d binaries", len(bins))
	}
	return files, nil
}

// layer is files as an uncompressed tar, every entry at created, gzipped
// by go-containerregistry, which writes no time into the gzip header.
func layer(files []file, created time.Time) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{
			Name:    f.name,
			Mode:    f.mode,
			Uid:     f.uid,
			Gid:     f.uid,
			ModTime: created,
			Format:  tar.FormatPAX,
		}
		data := f.data
		if f.fromPath != "" {
			var err error
			if data, err = os.ReadFile(f.fromPath); err != nil {
				return nil, err
			}
		}
		switch {
		case f.isDir:
			h.Typeflag = tar.TypeDir
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	raw := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(raw)), nil
	}, tarball.WithMediaType(types.OCILayer))
}

// Binaries builds whestbake-worker and whestbake from the module at src into
// dir as the image wants them: cgo-free and so static, with -trimpath and no
// VCS stamp, so that the same source gives the same bytes on any machine
// with the same Go.
func Binaries(src, dir string) (map[string]string, error) {
	out := map[string]string{}
	for name, pkg := range map[string]string{
		"whestbake-worker": "./cmd/worker",
		"whestbake":        "./cmd/starter",
	} {
		path := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-o", path, pkg)
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
		if b, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
		}
		out[name] = path
	}
	return out, nil
}
