package e2e

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/internal/tlsconf"
	"github.com/whestbake/whestbake/internal/tlsconf/tlstest"
)

// TestProductionTopology runs a bake on the topology an operator deploys,
// set up by the commands of docs/DEPLOY.md §2 and §3 as the guide writes
// them (its blocks marked `<!-- e2e: NAME -->`, run with bash): the
// PostgreSQL role and both schemas by bin/temporal-sql-tool, Temporal's own
// server binary (the version the CLI embeds) started from deploy/temporal/
// with its frontend requiring mutual TLS, the namespace and search
// attributes by the temporal CLI, MinIO over TLS with its buckets made by
// curl, and the Web UI server from deploy/temporal-ui/. Control and
// GPU-role workers run as separate processes over mTLS with metrics on.
// Mid-bake a GPU worker is SIGKILLed inside an MLP and the Temporal server
// is restarted; the release must still be byte-identical to a local bake,
// the lost worker must show (status, the alert of DEPLOY §7), and the
// finished bake's page in the Web UI must show its splits and slices.
func TestProductionTopology(t *testing.T) {
	requireE2E(t)
	pg := requirePostgres(t)
	for _, b := range []string{"temporal-server", "temporal-sql-tool", "temporal-ui-server"} {
		if _, err := os.Stat(filepath.Join(repoRoot, "bin", b)); err != nil {
			missing(t, fmt.Sprintf("bin/%s is missing: run `make tools` "+
				"(go.temporal.io/server v1.29.1's server and SQL tool, ui-server v2.42.1)", b), false)
		}
	}
	dir, err := os.MkdirTemp("", "whestbake-prod-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	g := newGuide(t, dir, pg.start(t, dir))
	g.run(t, "database")
	ts := &temporalServer{guide: g, logs: filepath.Join(dir, "logs")}
	ts.start(t)
	g.run(t, "namespace")
	waitFor(t, 30*time.Second, "the search attributes (DEPLOY §2)", func() bool {
		return g.try("search-attributes") == nil
	})
	t.Logf("PostgreSQL, schema and Temporal server with mTLS ready in %s",
		time.Since(start).Round(time.Millisecond))
	ui := g.startUI(t)

	// MinIO over TLS, its buckets made as DEPLOY §3 makes them, and the
	// stack the other e2e helpers work on.
	o := devtest.Options(t)
	o.AccessKey = "prod-" + randomHex(4)
	o.SecretKey = "prod-secret-" + randomHex(16)
	o = devtest.StartMinIO(t, devtest.WithMinIOTLS(t, o))
	g.vars["S3_ENDPOINT"] = o.S3Config().Endpoint
	if !strings.HasPrefix(g.vars["S3_ENDPOINT"], "https://") {
		g.vars["S3_ENDPOINT"] = "https://" + g.vars["S3_ENDPOINT"]
	}
	g.vars["S3_CA"] = o.MinIOCAFile
	g.vars["WHESTBAKE_S3_ACCESS_KEY"] = o.AccessKey
	g.vars["WHESTBAKE_S3_SECRET_KEY"] = o.SecretKey
	g.run(t, "buckets")
	s := &stack{
		t:      t,
		opts:   o,
		dir:    dir,
		secret: o.SecretKey,
	}
	s.temporal = map[string]any{
		"address":   g.addr(),
		"namespace": g.vars["TEMPORAL_NAMESPACE"],
		"ui":        ui,
		"tls": map[string]any{
			"ca-file":     g.pki.serverCA.CAFile,
			"server-name": serverName,
			"cert-file":   g.pki.worker.CertFile,
			"key-file":    g.pki.worker.KeyFile,
		},
	}
	ctx := context.Background()
	if s.art, err = store.Open(ctx, o.S3Config(), artifactBucket); err != nil {
		t.Fatal(err)
	}
	if s.rel, err = s.art.WithBucket(ctx, releaseBucket); err != nil {
		t.Fatal(err)
	}
	s.tc = ts.client(t, g.clientTLS())
	checkMisconfigurations(t, s, g)
	bakeThroughFailures(t, s, ts)
}

// checkMisconfigurations: misconfigurations meet the real frontend, and
// each names its key.
func checkMisconfigurations(t *testing.T, s *stack, g *guide) {
	t.Helper()
	ns := g.vars["TEMPORAL_NAMESPACE"]
	statusCfg := s.baseConfig()
	statusCfg["temporal"] = map[string]any{"address": g.addr(), "namespace": ns,
		"tls": map[string]any{"ca-file": g.pki.serverCA.CAFile, "server-name": serverName}}
	r := s.whestbake(nil, "list", "--config-file", s.writeConfig("no-client-cert", statusCfg))
	if r.code == 0 ||
		!strings.Contains(r.stderr, "requires a client certificate") ||
		!strings.Contains(r.stderr, "temporal.tls.cert-file") {
		t.Errorf("mTLS frontend without a client certificate:\n%s", r)
	}
	statusCfg["temporal"] = map[string]any{"address": g.addr(), "namespace": ns}
	r = s.whestbake(nil, "list", "--config-file", s.writeConfig("plain-text", statusCfg))
	if r.code == 0 || !strings.Contains(r.stderr, "speaks TLS") {
		t.Errorf("plain text to the mTLS frontend:\n%s", r)
	}
}

// bakeThroughFailures bakes two splits while a GPU worker is killed inside
// an MLP and the server restarts, then checks the release, the histories,
// what the lost worker left (status, metrics, DEPLOY §7's alert) and the
// Web UI.
func bakeThroughFailures(t *testing.T, s *stack, ts *temporalServer) {
	control := s.startWorker("control", "--metrics-listen", "127.0.0.1:0", "--log-format", "json")
	gpu := s.startWorker("gpu", "--metrics-listen", "127.0.0.1:0", "--log-format", "json")

	// Two splits; MLPs of about a second, checkpointed every 200 ms. The
	// public split's slice [1,3) is where the kill lands, inside MLP 2.
	b := bakeSpec{
		ID:          "prod",
		Width:       64,
		Depth:       4,
		NSamples:    3_000_000,
		SliceSize:   2,
		MaxInFlight: 1,
		Tag:         "prod",
		Splits:      []splitSpec{{"public", "default", 3, 41}, {"holdout", "holdout", 2, 42}},
	}
	cfg := s.bakeConfig(b)
	s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
	bk := keys.Bake(b.ID)
	exists := func(key string) bool { return s.exists(t, key) }
	s.killInsideMLP2(t, gpu, b.ID, 2*time.Minute)
	gpu2 := s.startWorker("gpu", "--metrics-listen", "127.0.0.1:0", "--log-format", "json")

	// Restart the Temporal server while the bake runs; PostgreSQL keeps its state.
	waitFor(t, 2*time.Minute, "public MLP 2 resumed and finished", func() bool {
		return exists(bk.MLPResult("public", 2))
	})
	if exists(keys.Manifest(bk.Dataset())) {
		t.Fatal("the bake finished before the server restart: make its MLPs slower")
	}
	// A watch follows the bake through the restart (DEPLOY §8 has
	// operators restart the server mid-bake) and sees it to its end.
	watching := s.spawn("watch-through-restart", nil, filepath.Join(binDir, "whestbake"),
		"watch", b.ID, "--config-file", cfg, "--interval", "200ms")
	time.Sleep(time.Second)
	ts.restart(t)
	select {
	case <-watching.done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("the watch did not end with the bake:\n%s", watching.output())
	}
	if code := watching.cmd.ProcessState.ExitCode(); code != 0 ||
		!strings.Contains(watching.output(), "Bake prod: COMPLETED") {
		t.Errorf("the watch through a server restart: exit %d\n%s", code, watching.output())
	}
	s.watch(cfg, b.ID)

	datasettest.SameDataset(t, s.download(b), s.localBake(b))
	runs := s.sliceRuns(bakeapi.SplitWorkflowID(b.ID, "public"))
	resumed := false
	for _, r := range runs {
		if r.In.Slice == 1 && r.Attempt >= 2 && r.Out.Resumed+r.Out.Reused >= 1 {
			resumed = true
		}
	}
	if !resumed {
		t.Errorf("public slice 1 was not resumed after the kill: %+v", runs)
	}
	t.Run("replay live histories", func(t *testing.T) {
		s.replayLive(t, bakeapi.BakeWorkflowID(b.ID))
		s.replayLive(t, bakeapi.SplitWorkflowID(b.ID, "public"))
	})
	checkMetrics(t, control, gpu2)
	checkLostWorker(t, s, cfg, b.ID, gpu2)
	t.Run("web UI", func(t *testing.T) { checkWebUI(t, s, cfg, b.ID) })
	assertNoSecretInLogs(t, filepath.Join(s.dir, "logs"), s.secret)
}

// checkMetrics: the new GPU worker resumed MLP 2 from its checkpoint; the
// control worker's workflows report split progress and its SDK talked to
// the frontend over mTLS.
func checkMetrics(t *testing.T, control, gpu2 *proc) {
	t.Helper()
	g := scrape(t, gpu2)
	if v := g[`whestbake_mlps_total{outcome="resumed"}`]; v < 1 {
		t.Errorf("the replacement GPU worker resumed %v MLPs, want ≥ 1", v)
	}
	if v := g[`whestbake_engine_samples_total{device="cpu",engine="cpu"}`]; v <= 0 {
		t.Errorf("the replacement GPU worker computed %v samples", v)
	}
	c := scrape(t, control)
	if !hasSeries(c, "whestbake_split_mlps_done", `split="holdout"`, 2) ||
		!hasSeries(c, "whestbake_split_mlps", `split="public"`, 3) {
		t.Errorf("the control worker's split gauges are missing:\n%v", keysOf(c, "whestbake_split"))
	}
	if !hasSeries(c, "temporal_request_total", "", -1) {
		t.Errorf("the control worker exports no Temporal SDK request counter")
	}
}

// checkLostWorker: the killed GPU worker left a trace. The worker that took
// the slice's next attempt counted the heartbeat timeout DEPLOY §7 alerts
// on, and logged it; status (text and --json) lists the slice as retried,
// its last failure the heartbeat timeout.
func checkLostWorker(t *testing.T, s *stack, cfg, id string, gpu2 *proc) {
	t.Helper()
	deploy, err := os.ReadFile(filepath.Join(repoRoot, "docs", "DEPLOY.md"))
	if err != nil {
		t.Fatal(err)
	}
	const alert = "increase(whestbake_slice_heartbeat_timeouts_total[1h]) > 0"
	if !strings.Contains(string(deploy), alert) {
		t.Errorf("DEPLOY.md §7 does not alert on %s", alert)
	}
	// The counter starts at 0 (the series exists before the first loss),
	// so its increase over the bake is its value.
	if v := scrape(t, gpu2)["whestbake_slice_heartbeat_timeouts_total"]; v < 1 {
		t.Errorf("the alert's counter is %v on the worker that took the lost slice, want ≥ 1", v)
	}
	if !strings.Contains(gpu2.output(), "lost to a heartbeat timeout") {
		t.Errorf("the replacement GPU worker did not log the lost attempt:\n%s", gpu2.output())
	}
	text := s.mustWhestbake("status", id, "--config-file", cfg).stdout
	if !regexp.MustCompile(`split public: slice 1 \(MLPs 1-2\) finished after \d+ attempts; ` +
		`last failure HeartbeatTimeout`).MatchString(text) {
		t.Errorf("status does not show the lost slice:\n%s", text)
	}
	var st struct {
		Splits []struct {
			Name    string
			History struct {
				Retried map[string]struct {
					Attempts    int    `json:"attempts"`
					LastFailure string `json:"last_failure"`
				} `json:"retried_slices"`
			}
		}
	}
	raw := s.mustWhestbake("status", id, "--config-file", cfg, "--json").stdout
	if err := json.Unmarshal([]byte(raw), &st); err != nil {
		t.Fatal(err)
	}
	r := st.Splits[0].History.Retried["1"]
	if st.Splits[0].Name != "public" || r.Attempts < 2 || r.LastFailure != "HeartbeatTimeout" {
		t.Errorf("status --json: public's retried slice 1 is %+v, want ≥ 2 attempts, "+
			"last HeartbeatTimeout:\n%s", r, raw)
	}
}

// serverName is the frontend certificate's DNS name; workers check it
// with temporal.tls.server-name while dialing 127.0.0.1.
const serverName = "temporal.whestbake.test"

// missing skips the test with why, which says how to install what is
// missing, or fails it where the piece is required: E2E_REQUIRED=1 for the
// server binaries, E2E_REQUIRE_POSTGRES=1 for PostgreSQL (.ci/run sets both).
func missing(t *testing.T, why string, postgres bool) {
	t.Helper()
	if postgres {
		// make test sets E2E_REQUIRED (it builds the servers first), but
		// PostgreSQL is a system package a developer may not have.
		missingSystem(t, why, "E2E_REQUIRE_POSTGRES")
	}
	if os.Getenv("E2E_REQUIRED") == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// missingSystem skips the test for a missing system package, or fails it
// where the variable require is 1 (.ci/run sets it after installing it).
func missingSystem(t *testing.T, why, require string) {
	t.Helper()
	if os.Getenv(require) == "1" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// postgres is a PostgreSQL installation found on this machine.
type postgres struct {
	initdb, server string
	cred           *syscall.Credential // run as this user (postgres refuses root)
	uid, gid       int
}

// requirePostgres finds initdb and postgres on PATH or where Debian puts
// them (/usr/lib/postgresql/<version>/bin, not on PATH).
func requirePostgres(t *testing.T) postgres {
	t.Helper()
	const install = "PostgreSQL is missing: " +
		"install it with `apt-get install postgresql` (Debian/Ubuntu)"
	var p postgres
	find := func(name string) string {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
		dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
		sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
		for _, d := range dirs {
			if _, err := os.Stat(filepath.Join(d, name)); err == nil {
				return filepath.Join(d, name)
			}
		}
		return ""
	}
	p.initdb = find("initdb")
	p.server = find("postgres")
	if p.initdb == "" || p.server == "" {
		missing(t, install, true)
	}
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			missing(t, install+" (as root, the test runs PostgreSQL "+
				"as the package's postgres user, which is missing)", true)
		}
		p.uid, _ = strconv.Atoi(u.Uid)
		p.gid, _ = strconv.Atoi(u.Gid)
		p.cred = &syscall.Credential{Uid: uint32(p.uid), Gid: uint32(p.gid)}
	}
	return p
}

func pgVersion(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

// start creates a cluster under dir and runs it on a free loopback port,
// without durability (a test database), until the test ends.
func (p postgres) start(t *testing.T, dir string) int {
	t.Helper()
	data := filepath.Join(dir, "pg")
	sock := filepath.Join(dir, "pgsock")
	for _, d := range []string{data, sock} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if p.cred != nil {
			if err := os.Chown(d, p.uid, p.gid); err != nil {
				t.Fatal(err)
			}
		}
	}
	if p.cred != nil {
		// The postgres user must reach its directories.
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// The superuser is postgres, as on a packaged server: DEPLOY §2 makes
	// Temporal's role with CREATEDB only.
	initdb := exec.Command(p.initdb, "-D", data, "-U", "postgres",
		"--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: p.cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	port := devtest.FreePorts(t, 1)[0]
	pr := startProc(t, filepath.Join(dir, "logs"), "postgres", nil, p.cred, p.server,
		"-D", data, "-h", "127.0.0.1", "-p", strconv.Itoa(port), "-k", sock,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	t.Cleanup(func() { pr.stop(syscall.SIGINT, 20*time.Second) }) // fast shutdown
	waitFor(t, 30*time.Second, "PostgreSQL to accept connections", func() bool {
		if strings.Contains(pr.output(), "ready to accept connections") {
			return true
		}
		select {
		case <-pr.done:
			t.Fatalf("postgres exited:\n%s", pr.output())
		default:
		}
		return false
	})
	return port
}

// guide is the walk of docs/DEPLOY.md §2 and §3: the variables its
// commands read, as this test sets them, and the certificates it names.
type guide struct {
	vars map[string]string
	pki  pki
}

// pki is §2's certificates: one CA for the frontend's certificate, one for
// every client's.
type pki struct {
	serverCA, clientCA                     *tlstest.CA
	frontend, system, worker, admin, webUI tlstest.Leaf
}

// newGuide makes the certificates and sets the variables: PostgreSQL on
// pgPort, loopback ports below 32768 (DEPLOY §2: Temporal stores its
// membership ports in a smallint), deploy/temporal/ as it is in the tree.
func newGuide(t *testing.T, dir string, pgPort int) *guide {
	t.Helper()
	pkiDir := filepath.Join(dir, "pki")
	if err := os.MkdirAll(pkiDir, 0o755); err != nil {
		t.Fatal(err)
	}
	k := pki{
		serverCA: tlstest.NewCA(t, pkiDir, "frontend"),
		clientCA: tlstest.NewCA(t, pkiDir, "clients"),
	}
	k.frontend = k.serverCA.Issue(t, "frontend", tlstest.LeafOptions{
		Server: true,
		Hosts:  []string{serverName, "127.0.0.1"},
	})
	k.system = k.clientCA.Issue(t, "temporal-system-worker", tlstest.LeafOptions{})
	k.worker = k.clientCA.Issue(t, "whestbake-worker", tlstest.LeafOptions{})
	k.admin = k.clientCA.Issue(t, "admin", tlstest.LeafOptions{})
	k.webUI = k.clientCA.Issue(t, "temporal-ui", tlstest.LeafOptions{})
	p := lowFreePorts(t, 9)
	root := filepath.Join(repoRoot, "deploy", "temporal")
	vars := map[string]string{
		"POSTGRES_SEEDS":     "127.0.0.1",
		"DB_PORT":            strconv.Itoa(pgPort),
		"POSTGRES_USER":      "temporal",
		"POSTGRES_PWD":       "pg-" + randomHex(8),
		"TEMPORAL_ROOT":      root,
		"TEMPORAL_UI_ROOT":   filepath.Join(repoRoot, "deploy", "temporal-ui"),
		"TEMPORAL_ADDRESS":   fmt.Sprintf("127.0.0.1:%d", p[0]),
		"TEMPORAL_NAMESPACE": "bakes",
		"TEMPORAL_TLS_CA":    k.serverCA.CAFile,
		"TEMPORAL_TLS_CERT":  k.admin.CertFile,
		"TEMPORAL_TLS_KEY":   k.admin.KeyFile,
		// The server's config: one host, a test's shards and log level,
		// the TLS files where this test made them.
		"TEMPORAL_TLS_SERVER_NAME":          serverName,
		"BIND_ON_IP":                        "127.0.0.1",
		"TEMPORAL_BROADCAST_ADDRESS":        "127.0.0.1",
		"NUM_HISTORY_SHARDS":                "4",
		"LOG_LEVEL":                         "warn",
		"DYNAMIC_CONFIG_FILE_PATH":          filepath.Join(root, "config", "dynamicconfig", "production.yaml"),
		"TEMPORAL_TLS_FRONTEND_CERT":        k.frontend.CertFile,
		"TEMPORAL_TLS_FRONTEND_KEY":         k.frontend.KeyFile,
		"TEMPORAL_TLS_CLIENT1_CA_CERT":      k.clientCA.CAFile,
		"TEMPORAL_TLS_SERVER_CA_CERT":       k.serverCA.CAFile,
		"TEMPORAL_TLS_FRONTEND_SERVER_NAME": serverName,
		"TEMPORAL_TLS_SYSTEM_WORKER_CERT":   k.system.CertFile,
		"TEMPORAL_TLS_SYSTEM_WORKER_KEY":    k.system.KeyFile,
	}
	for i, name := range []string{
		"FRONTEND_GRPC_PORT", "FRONTEND_HTTP_PORT", "FRONTEND_MEMBERSHIP_PORT",
		"HISTORY_GRPC_PORT", "HISTORY_MEMBERSHIP_PORT", "MATCHING_GRPC_PORT",
		"MATCHING_MEMBERSHIP_PORT", "WORKER_GRPC_PORT", "WORKER_MEMBERSHIP_PORT",
	} {
		vars[name] = strconv.Itoa(p[i])
	}
	return &guide{vars: vars, pki: k}
}

func (g *guide) addr() string { return g.vars["TEMPORAL_ADDRESS"] }

// environ is this process's environment without any variable the guide's
// programs read, plus the guide's variables and extra.
func (g *guide) environ(extra map[string]string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if _, set := g.vars[k]; !set && !strings.HasPrefix(k, "WHESTBAKE_") &&
			!strings.HasPrefix(k, "TEMPORAL_") && !strings.HasPrefix(k, "PG") {
			out = append(out, kv)
		}
	}
	for _, vars := range []map[string]string{g.vars, extra} {
		for k, v := range vars {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// guideBlock is the shell block of docs/DEPLOY.md after the line
// `<!-- e2e: name -->`.
func guideBlock(name string) (string, error) {
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "DEPLOY.md"))
	if err != nil {
		return "", err
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- e2e: "+name+" -->\n```sh\n")
	body, _, closed := strings.Cut(rest, "```")
	if !ok || !closed {
		return "", fmt.Errorf("docs/DEPLOY.md has no block marked e2e: %s", name)
	}
	return body, nil
}

// command is the command line of block name, to run from the repository
// root as a process of its own.
func command(t *testing.T, name string) []string {
	t.Helper()
	body, err := guideBlock(name)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"bash", "-c", "cd " + repoRoot + " && exec " + body}
}

// try runs block name with bash in the repository root, as an operator
// pastes it, and returns its failure with its output.
func (g *guide) try(name string) error {
	body, err := guideBlock(name)
	if err != nil {
		return err
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", body)
	cmd.Dir = repoRoot
	cmd.Env = g.environ(nil)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("DEPLOY.md's %s block: %v\n%s\n%s", name, err, body, out)
	}
	return nil
}

// run is try for a block that must succeed.
func (g *guide) run(t *testing.T, name string) {
	t.Helper()
	if err := g.try(name); err != nil {
		t.Fatal(err)
	}
}

// startUI starts the Web UI server as DEPLOY §2 does, on a free loopback
// port with its own client certificate, and returns its base URL.
func (g *guide) startUI(t *testing.T) string {
	t.Helper()
	port := devtest.FreePorts(t, 1)[0]
	env := g.environ(map[string]string{
		"TEMPORAL_UI_HOST":  "127.0.0.1",
		"TEMPORAL_UI_PORT":  strconv.Itoa(port),
		"TEMPORAL_TLS_CERT": g.pki.webUI.CertFile,
		"TEMPORAL_TLS_KEY":  g.pki.webUI.KeyFile,
	})
	ui := command(t, "ui")
	logs := filepath.Join(filepath.Dir(g.pki.serverCA.CAFile), "..", "logs")
	p := startProc(t, logs, "temporal-ui", env, nil, ui[0], ui[1:]...)
	t.Cleanup(func() { p.stop(syscall.SIGTERM, 10*time.Second) })
	base := fmt.Sprintf("http://127.0.0.1:%d", port)
	waitFor(t, 30*time.Second, "the Web UI server", func() bool {
		select {
		case <-p.done:
			t.Fatalf("temporal-ui-server exited:\n%s", p.output())
		default:
		}
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	return base
}

// clientTLS is the test's own client identity, a whestbake worker's.
func (g *guide) clientTLS() *tls.Config {
	return &tls.Config{
		RootCAs:      g.pki.serverCA.Pool(),
		ServerName:   serverName,
		Certificates: []tls.Certificate{g.pki.worker.TLS},
		MinVersion:   tls.VersionTLS12,
	}
}

// temporalServer is bin/temporal-server started by DEPLOY §2's command.
type temporalServer struct {
	guide  *guide
	logs   string
	proc   *proc
	starts int
}

// start runs the server and waits until its frontend answers over mTLS.
func (ts *temporalServer) start(t *testing.T) {
	t.Helper()
	ts.starts++
	name := fmt.Sprintf("temporal-server-%d", ts.starts)
	server := command(t, "server")
	ts.proc = startProc(t, ts.logs, name, ts.guide.environ(nil), nil, server[0], server[1:]...)
	p := ts.proc
	t.Cleanup(func() { p.stop(syscall.SIGTERM, 20*time.Second) })
	tc := ts.probeTLS()
	waitFor(t, 90*time.Second, "the Temporal server's frontend", func() bool {
		select {
		case <-p.done:
			t.Fatalf("temporal-server exited:\n%s", p.output())
		default:
		}
		c, err := client.Dial(client.Options{
			HostPort:          ts.guide.addr(),
			Namespace:         "temporal-system",
			ConnectionOptions: client.ConnectionOptions{TLS: tc},
			Logger:            quiet(),
		})
		if err != nil {
			return false
		}
		defer c.Close()
		_, err = c.CheckHealth(context.Background(), &client.CheckHealthRequest{})
		return err == nil
	})
}

// probeTLS is the test's probe of the frontend: the system worker's
// client certificate.
func (ts *temporalServer) probeTLS() *tls.Config {
	k := ts.guide.pki
	files := tlsconf.Files{
		CA:         k.serverCA.CAFile,
		Cert:       k.system.CertFile,
		Key:        k.system.KeyFile,
		ServerName: serverName,
	}
	c, err := tlsconf.Client(files, tlsconf.Keys{}, time.Now())
	if err != nil {
		panic(err)
	}
	return c
}

// restart stops the server gracefully and starts it again on the same
// database and ports.
func (ts *temporalServer) restart(t *testing.T) {
	t.Helper()
	began := time.Now()
	ts.proc.stop(syscall.SIGTERM, 30*time.Second)
	ts.start(t)
	t.Logf("Temporal server restarted in %s", time.Since(began).Round(time.Millisecond))
}

// client dials the frontend as the test.
func (ts *temporalServer) client(t *testing.T, tc *tls.Config) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:          ts.guide.addr(),
		Namespace:         ts.guide.vars["TEMPORAL_NAMESPACE"],
		ConnectionOptions: client.ConnectionOptions{TLS: tc},
		Logger:            quiet(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func quiet() tlog.Logger {
	return tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// lowFreePorts are n free loopback ports below 32768: Temporal stores its
// membership ports in a PostgreSQL smallint, and the kernel's ephemeral
// ports (which FreePorts gets) start at 32768. They are probed by
// listening, held together, and released for the server to bind.
func lowFreePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for p := 20000 + int(time.Now().UnixNano()%10000); len(ports) < n && p < 32768; p++ {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", p))
		if err != nil {
			continue
		}
		held = append(held, l)
		ports = append(ports, p)
	}
	if len(ports) < n {
		t.Fatalf("found only %d free ports below 32768", len(ports))
	}
	return ports
}

// startProc runs a server process (as cred's user when set) with its
// output in logs/<name>.log.
func startProc(
	t *testing.T,
	logs, name string,
	env []string,
	cred *syscall.Credential,
	bin string,
	args ...string,
) *proc {
	t.Helper()
	p := &proc{
		name: name,
		log:  filepath.Join(logs, name+".log"),
		done: make(chan struct{}),
	}
	f, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(bin, args...)
	if env != nil {
		p.cmd.Env = env
	}
	p.cmd.Stdout, p.cmd.Stderr = f, f
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: cred}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(p.kill)
	return p
}

// stop sends sig and waits up to timeout before SIGKILL.
func (p *proc) stop(sig syscall.Signal, timeout time.Duration) {
	select {
	case <-p.done:
		return
	default:
	}
	_ = p.cmd.Process.Signal(sig)
	select {
	case <-p.done:
	case <-time.After(timeout):
		p.kill()
	}
}

// scrape reads a worker's /metrics; the address is in its "serving
// metrics" log line.
func scrape(t *testing.T, p *proc) map[string]float64 {
	t.Helper()
	var addr string
	for _, l := range strings.Split(p.output(), "\n") {
		if strings.Contains(l, `"msg":"serving metrics"`) {
			if i := strings.Index(l, `"addr":"`); i >= 0 {
				addr = l[i+len(`"addr":"`):]
				addr = addr[:strings.Index(addr, `"`)]
			}
		}
	}
	if addr == "" {
		t.Fatalf("%s logged no metrics address:\n%s", p.name, p.output())
	}
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, l := range strings.Split(string(body), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndex(l, " ")
		if v, err := strconv.ParseFloat(l[i+1:], 64); err == nil {
			out[l[:i]] = v
		}
	}
	return out
}

// hasSeries reports whether some series of metric with label has value
// (any value when want < 0).
func hasSeries(m map[string]float64, metric, label string, want float64) bool {
	for k, v := range m {
		if (k == metric || strings.HasPrefix(k, metric+"{")) &&
			strings.Contains(k, label) &&
			(want < 0 || v == want) {
			return true
		}
	}
	return false
}

func keysOf(m map[string]float64, prefix string) []string {
	var out []string
	for k := range m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// assertNoSecretInLogs reads every process log of the run.
func assertNoSecretInLogs(t *testing.T, dir, secret string) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), secret) {
			t.Errorf("%s contains the S3 secret", f)
		}
	}
}
