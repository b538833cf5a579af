// Package deploy holds the deployment files (systemd units, Kubernetes
// manifests, the container build, the Grafana dashboard); this test keeps
// them true to the code: config keys, flags, environment variables, ports
// and probe paths are the ones the binaries know.
package deploy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/worker"
)

// loadConfig checks a config file the way the worker reads it (unknown keys
// are errors) and returns it. Validation is left out: it reads key files that
// exist only on the deployment hosts.
func loadConfig(t *testing.T, name, body string) settings.Config {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "WHESTBAKE_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	f := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := settings.Load(f, nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return cfg
}

// envNames are the environment variables whestbake reads.
func envNames() map[string]bool {
	out := map[string]bool{"WHESTBAKE_CONFIG_FILE": true}
	for _, k := range settings.Keys() {
		out[settings.EnvName(k)] = true
	}
	return out
}

var envRef = regexp.MustCompile(`\bWHESTBAKE_[A-Z0-9_]+\b`)

// checkEnv fails on any WHESTBAKE_* name in text that whestbake does not read.
func checkEnv(t *testing.T, file, text string) {
	t.Helper()
	known := envNames()
	for _, name := range envRef.FindAllString(text, -1) {
		if !known[name] {
			t.Errorf("%s sets %s, which no config key reads", file, name)
		}
	}
}

// checkWorkerArgs parses args with whestbake-worker's own flag set.
func checkWorkerArgs(t *testing.T, file string, args []string) {
	t.Helper()
	cmd := worker.NewCommand(io.Discard)
	if err := cmd.Flags().Parse(args); err != nil {
		t.Errorf("%s: whestbake-worker %v: %v", file, args, err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestSystemdUnits(t *testing.T) {
	cfg := loadConfig(t, "systemd/config.yaml", read(t, "systemd/config.yaml"))
	if !cfg.Temporal.TLSOn() || cfg.Temporal.TLS.CertFile == "" || cfg.S3.CAFile == "" {
		t.Errorf("systemd/config.yaml should show mTLS and the S3 CA: %+v", cfg.Temporal.TLS)
	}
	checkEnv(t, "systemd/secrets.env.example", read(t, "systemd/secrets.env.example"))
	for _, unit := range []string{"whestbake-control.service", "whestbake-worker@.service"} {
		text := read(t, filepath.Join("systemd", unit))
		checkEnv(t, unit, text)
		var exec string
		for _, l := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(l, "ExecStart="); ok {
				exec = v
			}
		}
		env := map[string]string{"METRICS_PORT": "9470"}
		fields := strings.Fields(os.Expand(exec, func(v string) string { return env[v] }))
		if len(fields) < 2 || !strings.HasPrefix(filepath.Base(fields[0]), "whestbake-worker") {
			t.Fatalf("%s: ExecStart=%s", unit, exec)
		}
		checkWorkerArgs(t, unit, fields[1:])
	}
	gpu := read(t, "systemd/whestbake-worker@.service")
	for _, want := range []string{
		"Environment=CUDA_VISIBLE_DEVICES=%i",
		"--role gpu",
		"--device cuda",
		"TimeoutStopSec=200",
	} {
		if !strings.Contains(gpu, want) {
			t.Errorf("whestbake-worker@.service lacks %q", want)
		}
	}
	if !strings.Contains(read(t, "systemd/whestbake-control.service"), "--role control") {
		t.Error("whestbake-control.service does not run --role control")
	}
}

// k8s is the part of a manifest the test reads.
type k8s struct {
	Kind     string `yaml:"kind"`
	Metadata struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Data map[string]string `yaml:"data"`
	Spec struct {
		Template struct {
			Spec struct {
				TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
				Containers                    []struct {
					Args []string `yaml:"args"`
					Env  []struct {
						Name string `yaml:"name"`
					} `yaml:"env"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					LivenessProbe struct {
						HTTPGet struct {
							Path string `yaml:"path"`
							Port any    `yaml:"port"`
						} `yaml:"httpGet"`
					} `yaml:"livenessProbe"`
					Resources struct {
						Limits map[string]any `yaml:"limits"`
					} `yaml:"resources"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func TestKubernetesManifests(t *testing.T) {
	files, _ := filepath.Glob("kubernetes/*.yaml")
	var docs []k8s
	for _, f := range files {
		dec := yaml.NewDecoder(bytes.NewReader([]byte(read(t, f))))
		for {
			var d k8s
			err := dec.Decode(&d)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			docs = append(docs, d)
		}
	}
	var cfg settings.Config
	deployments := map[string]k8s{}
	for _, d := range docs {
		switch d.Kind {
		case "ConfigMap":
			cfg = loadConfig(t, "ConfigMap "+d.Metadata.Name, d.Data["config.yaml"])
		case "Deployment":
			deployments[d.Metadata.Name] = d
		}
	}
	_, port, err := net.SplitHostPort(cfg.Worker.MetricsListen)
	if err != nil {
		t.Fatalf("the ConfigMap's worker.metrics-listen %q: %v", cfg.Worker.MetricsListen, err)
	}
	roles := map[string]string{"whestbake-control": "control", "whestbake-gpu": "gpu"}
	for name, role := range roles {
		d, ok := deployments[name]
		if !ok || len(d.Spec.Template.Spec.Containers) != 1 {
			t.Fatalf("no Deployment %s with one container", name)
		}
		c := d.Spec.Template.Spec.Containers[0]
		checkWorkerArgs(t, name, c.Args)
		if !strings.Contains(strings.Join(c.Args, " "), "--role "+role) {
			t.Errorf("%s runs %v, not --role %s", name, c.Args, role)
		}
		for _, e := range c.Env {
			if strings.HasPrefix(e.Name, "WHESTBAKE_") && !envNames()[e.Name] {
				t.Errorf("%s sets %s, which no config key reads", name, e.Name)
			}
		}
		if len(c.Ports) != 1 ||
			c.Ports[0].Name != c.LivenessProbe.HTTPGet.Port ||
			strings.TrimSpace(port) != strconv.Itoa(c.Ports[0].ContainerPort) {
			t.Errorf("%s: liveness on port %v, container port %+v, worker.metrics-listen %s",
				name, c.LivenessProbe.HTTPGet.Port, c.Ports, cfg.Worker.MetricsListen)
		}
		if c.LivenessProbe.HTTPGet.Path != "/healthz" {
			t.Errorf("%s: liveness probe on %q, the worker serves /healthz",
				name, c.LivenessProbe.HTTPGet.Path)
		}
	}
	gpu := deployments["whestbake-gpu"]
	if g := gpu.Spec.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; g != 1 {
		t.Errorf("the GPU worker asks for nvidia.com/gpu: %v, want 1 per pod", g)
	}
	gpuArgs := strings.Join(gpu.Spec.Template.Spec.Containers[0].Args, " ")
	if !strings.Contains(gpuArgs, "--device cuda") {
		t.Error("the GPU worker does not run --device cuda")
	}
	// Longer than the worker's wait for a slice to hand back.
	grace := gpu.Spec.Template.Spec.TerminationGracePeriodSeconds
	if grace <= int(worker.GPUStopTimeout.Seconds()) {
		t.Errorf("terminationGracePeriodSeconds %d ≤ worker.GPUStopTimeout %s",
			grace, worker.GPUStopTimeout)
	}
}

func TestContainerBuild(t *testing.T) {
	df := read(t, "container/Dockerfile")
	for _, want := range []string{
		"CGO_ENABLED=0 go build -trimpath -o /out/whestbake-worker ./cmd/worker",
		"go build -tags cuda",
		"AS control",
		"AS gpu",
		"gpuengine/internal/cudashim",
		"nvidia/cuda:${CUDA_VERSION}-runtime",
	} {
		if !strings.Contains(df, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	for _, m := range regexp.MustCompile(`CMD \[([^\]]*)\]`).FindAllStringSubmatch(df, -1) {
		var args []string
		for _, a := range strings.Split(m[1], ",") {
			args = append(args, strings.Trim(strings.TrimSpace(a), `"`))
		}
		checkWorkerArgs(t, "Dockerfile CMD", args)
	}
}

// The Temporal server and the Web UI server that `make tools` builds, and
// deploy/temporal/ and deploy/temporal-ui/ configure, are the versions the
// pinned Temporal CLI embeds: its go.mod, from the module cache or proxy.
func TestPinnedTemporalVersionsAgree(t *testing.T) {
	mk := read(t, "../Makefile")
	pin := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(\S+)`).FindStringSubmatch(mk)
		if m == nil {
			t.Fatalf("the Makefile pins no %s", name)
		}
		return m[1]
	}
	cli := pin("TEMPORAL_CLI_VERSION")
	out, err := exec.Command("go", "mod", "download", "-json", "github.com/temporalio/cli@"+cli).Output()
	if err != nil {
		t.Skipf("the Temporal CLI's go.mod is not in the module cache and the proxy "+
			"cannot be reached (%v)", err)
	}
	var mod struct{ GoMod string }
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	gomod := read(t, mod.GoMod)
	for module, name := range map[string]string{
		"go.temporal.io/server":              "TEMPORAL_SERVER_VERSION",
		"github.com/temporalio/ui-server/v2": "TEMPORAL_UI_VERSION",
	} {
		want := module + " " + pin(name)
		if !regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(want) + `\s*$`).MatchString(gomod) {
			t.Errorf("the Makefile's %s is %s, but the Temporal CLI %s embeds another %s",
				name, pin(name), cli, module)
		}
	}
	for f, v := range map[string]string{
		"temporal/config/production.yaml":    pin("TEMPORAL_SERVER_VERSION"),
		"temporal-ui/config/production.yaml": pin("TEMPORAL_UI_VERSION"),
	} {
		if !strings.Contains(read(t, f), v) {
			t.Errorf("%s does not name the version it is written for, %s", f, v)
		}
	}
}

// maxExposure is the worst `systemd-analyze security` rating a shipped unit
// may have: "OK" in systemd's words.
const maxExposure = 4.0

// The units are hardened: systemd's own rating of each, offline, is at
// most maxExposure. Skipped, saying so, where systemd-analyze is missing
// or has no --offline (systemd 250 added it); DEPLOY_REQUIRE_SYSTEMD=1
// (.ci/run, which installs systemd) makes either a failure.
func TestSystemdUnitsAreHardened(t *testing.T) {
	unavailable := func(why string) {
		if os.Getenv("DEPLOY_REQUIRE_SYSTEMD") == "1" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		unavailable("systemd-analyze is missing: install Debian's systemd package to rate the units")
	}
	dir := t.TempDir()
	for unit, as := range map[string]string{
		"whestbake-control.service": "whestbake-control.service",
		"whestbake-worker@.service": "whestbake-worker@0.service", // an instance of the template
	} {
		path := filepath.Join(dir, as)
		if err := os.WriteFile(path, []byte(read(t, filepath.Join("systemd", unit))), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(analyze, "security", "--offline=yes", path).CombinedOutput()
		m := regexp.MustCompile(`Overall exposure level for \S+: ([0-9.]+)`).FindSubmatch(out)
		switch {
		case err != nil && bytes.Contains(out, []byte("offline")) && m == nil:
			unavailable(fmt.Sprintf("this systemd-analyze cannot rate a unit offline: %s", out))
		case m == nil:
			t.Fatalf("systemd-analyze security %s: %v\n%s", unit, err, out)
		}
		if v, _ := strconv.ParseFloat(string(m[1]), 64); v > maxExposure {
			t.Errorf("%s: exposure %s, above %.1f:\n%s", unit, m[1], maxExposure, out)
		}
	}
}

// kinds are the Kubernetes objects the manifests hold, as k8s.io/api types.
var kinds = map[string]func() any{
	"v1/Namespace":       func() any { return &corev1.Namespace{} },
	"v1/ConfigMap":       func() any { return &corev1.ConfigMap{} },
	"v1/Secret":          func() any { return &corev1.Secret{} },
	"apps/v1/Deployment": func() any { return &appsv1.Deployment{} },
}

// Every manifest decodes into its Kubernetes API type with strict decoding
// (sigs.k8s.io/yaml's UnmarshalStrict: an unknown or misplaced field, a
// duplicate key or a value of the wrong type is an error), offline, as
// `kubectl apply --validate=strict` would refuse it.
func TestKubernetesManifestsDecodeStrictly(t *testing.T) {
	files, _ := filepath.Glob("kubernetes/*.yaml")
	n := 0
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		for i, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(read(t, f), -1) {
			var head struct{ APIVersion, Kind string }
			if err := sigsyaml.Unmarshal([]byte(doc), &head); err != nil {
				t.Fatalf("%s, document %d: %v", f, i+1, err)
			}
			if head.Kind == "" {
				continue // comments only
			}
			newObject, ok := kinds[head.APIVersion+"/"+head.Kind]
			if !ok {
				t.Errorf("%s: %s %s has no type here: add it to kinds", f, head.APIVersion, head.Kind)
				continue
			}
			if err := sigsyaml.UnmarshalStrict([]byte(doc), newObject()); err != nil {
				t.Errorf("%s, document %d (%s): %v", f, i+1, head.Kind, err)
			}
			n++
		}
	}
	if n < 6 {
		t.Errorf("decoded %d objects; the manifests hold a namespace, a ConfigMap, "+
			"three Secrets and two Deployments", n)
	}
}
