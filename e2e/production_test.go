package e2e

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	enums "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/devstack"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/internal/tlsconf"
	"github.com/whestbake/whestbake/internal/tlsconf/tlstest"
)

// TestProductionTopology runs a bake on the topology an operator deploys,
// not on the dev server: Temporal's own server binary (bin/temporal-server,
// the version the CLI embeds) persisted on PostgreSQL with the schema
// applied by bin/temporal-sql-tool, its frontend requiring mutual TLS with
// certificates made here, MinIO over TLS with a private CA, and control
// and GPU-role workers as separate processes connected over mTLS with
// metrics on. Mid-bake a GPU worker is SIGKILLed inside an MLP and the
// Temporal server is restarted; the release must still be byte-identical
// to a local bake, and the workers' metrics must show what happened.
func TestProductionTopology(t *testing.T) {
	requireE2E(t)
	pg := requirePostgres(t)
	for _, b := range []string{"temporal-server", "temporal-sql-tool"} {
		if _, err := os.Stat(filepath.Join(repoRoot, "bin", b)); err != nil {
			missing(t, fmt.Sprintf("bin/%s is missing: run `make tools` "+
				"(builds go.temporal.io/server v1.29.1's server and SQL tool)", b), false)
		}
	}
	dir, err := os.MkdirTemp("", "whestbake-prod-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, d := range []string{"logs", "pki"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	// Certificates: one CA for the frontend's certificate, one for clients.
	serverCA := tlstest.NewCA(t, filepath.Join(dir, "pki"), "frontend")
	clientCA := tlstest.NewCA(t, filepath.Join(dir, "pki"), "clients")
	frontendCert := serverCA.Issue(t, "frontend", tlstest.LeafOptions{
		Server: true,
		Hosts:  []string{serverName, "127.0.0.1"},
	})
	workerCert := clientCA.Issue(t, "whestbake-worker", tlstest.LeafOptions{})
	systemCert := clientCA.Issue(t, "temporal-system-worker", tlstest.LeafOptions{})

	start := time.Now()
	pgPort := pg.start(t, dir)
	ts := &temporalServer{
		dir:      filepath.Join(dir, "temporal"),
		logs:     filepath.Join(dir, "logs"),
		pgPort:   pgPort,
		serverCA: serverCA.CAFile,
		clientCA: clientCA.CAFile,
		cert:     frontendCert,
		system:   systemCert,
	}
	ts.applySchema(t)
	ts.configure(t)
	ts.start(t)
	clientTLS := &tls.Config{
		RootCAs:      serverCA.Pool(),
		ServerName:   serverName,
		Certificates: []tls.Certificate{workerCert.TLS},
		MinVersion:   tls.VersionTLS12,
	}
	ts.prepareNamespace(t, clientTLS)
	t.Logf("PostgreSQL, schema and Temporal server with mTLS ready in %s",
		time.Since(start).Round(time.Millisecond))

	// MinIO over TLS, and the stack the other e2e helpers work on.
	o := devtest.Options(t)
	o.AccessKey = "prod-" + randomHex(4)
	o.SecretKey = "prod-secret-" + randomHex(16)
	o.Buckets = []string{artifactBucket, releaseBucket}
	o = devtest.StartMinIO(t, devtest.WithMinIOTLS(t, o))
	s := &stack{
		t:      t,
		opts:   o,
		dir:    dir,
		secret: o.SecretKey,
	}
	s.temporal = map[string]any{
		"address":   ts.addr(),
		"namespace": devstack.Namespace,
		"ui":        "http://127.0.0.1:1",
		"tls": map[string]any{
			"ca-file":     serverCA.CAFile,
			"server-name": serverName,
			"cert-file":   workerCert.CertFile,
			"key-file":    workerCert.KeyFile,
		},
	}
	ctx := context.Background()
	if s.art, err = store.Open(ctx, o.S3Config(), artifactBucket); err != nil {
		t.Fatal(err)
	}
	if s.rel, err = s.art.WithBucket(ctx, releaseBucket); err != nil {
		t.Fatal(err)
	}
	s.tc = ts.client(t, clientTLS)

	// Misconfigurations meet the real frontend: each names its key.
	statusCfg := s.baseConfig()
	statusCfg["temporal"] = map[string]any{"address": ts.addr(), "namespace": devstack.Namespace,
		"tls": map[string]any{"ca-file": serverCA.CAFile, "server-name": serverName}}
	r := s.whestbake(nil, "list", "--config-file", s.writeConfig("no-client-cert", statusCfg))
	if r.code == 0 ||
		!strings.Contains(r.stderr, "requires a client certificate") ||
		!strings.Contains(r.stderr, "temporal.tls.cert-file") {
		t.Errorf("mTLS frontend without a client certificate:\n%s", r)
	}
	statusCfg["temporal"] = map[string]any{"address": ts.addr(), "namespace": devstack.Namespace}
	r = s.whestbake(nil, "list", "--config-file", s.writeConfig("plain-text", statusCfg))
	if r.code == 0 || !strings.Contains(r.stderr, "speaks TLS") {
		t.Errorf("plain text to the mTLS frontend:\n%s", r)
	}

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
	ts.restart(t)
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

	// The metrics moved: the new GPU worker resumed MLP 2 from its
	// checkpoint; the control worker's workflows report split progress and
	// its SDK talked to the frontend over mTLS.
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
	assertNoSecretInLogs(t, filepath.Join(dir, "logs"), o.SecretKey)
}

// serverName is the frontend certificate's DNS name; workers check it
// with temporal.tls.server-name while dialing 127.0.0.1.
const serverName = "temporal.whestbake.test"

// missing skips the test with why, which says how to install what is
// missing, or fails it where the piece is required: E2E_REQUIRED=1 for the
// server binaries, E2E_REQUIRE_POSTGRES=1 for PostgreSQL (.ci/run sets both).
func missing(t *testing.T, why string, postgres bool) {
	t.Helper()
	required := os.Getenv("E2E_REQUIRED") == "1"
	if postgres {
		// make test sets E2E_REQUIRED (it builds the servers first), but
		// PostgreSQL is a system package a developer may not have.
		required = os.Getenv("E2E_REQUIRE_POSTGRES") == "1"
	}
	if required {
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
	initdb := exec.Command(p.initdb, "-D", data, "-U", "temporal",
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

// temporalServer is bin/temporal-server with its config under dir.
type temporalServer struct {
	dir, logs          string
	pgPort             int
	serverCA, clientCA string
	cert, system       tlstest.Leaf
	// frontend grpc, http, membership; history, matching, worker grpc and membership
	ports  []int
	proc   *proc
	starts int
}

func (ts *temporalServer) addr() string { return fmt.Sprintf("127.0.0.1:%d", ts.ports[0]) }

// applySchema creates both databases and applies the embedded schemas
// with the SQL tool, as an operator would.
func (ts *temporalServer) applySchema(t *testing.T) {
	t.Helper()
	tool := filepath.Join(repoRoot, "bin", "temporal-sql-tool")
	for db, schema := range map[string]string{
		"temporal":            "postgresql/v12/temporal",
		"temporal_visibility": "postgresql/v12/visibility",
	} {
		common := []string{"--plugin", "postgres12", "--ep", "127.0.0.1",
			"-p", strconv.Itoa(ts.pgPort), "-u", "temporal", "--pw", "unused-with-trust",
			"--db", db}
		for _, step := range [][]string{
			{"create-database"},
			{"setup-schema", "-v", "0.0"},
			{"update-schema", "-s", schema},
		} {
			out, err := exec.Command(tool, append(common, step...)...).CombinedOutput()
			if err != nil {
				t.Fatalf("temporal-sql-tool %s on %s: %v\n%s", step[0], db, err, out)
			}
		}
	}
}

// configure writes the server's config: PostgreSQL persistence and
// visibility, mutual TLS on the frontend (the system worker inside the
// server presents a client certificate too), loopback ports.
func (ts *temporalServer) configure(t *testing.T) {
	t.Helper()
	ts.ports = lowFreePorts(t, 9)
	p := ts.ports
	if err := os.MkdirAll(filepath.Join(ts.dir, "config"), 0o755); err != nil {
		t.Fatal(err)
	}
	store := func(db string) string {
		return fmt.Sprintf(`      sql:
        pluginName: postgres12
        databaseName: %s
        connectAddr: "127.0.0.1:%d"
        connectProtocol: tcp
        user: temporal
        password: unused-with-trust
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
`, db, ts.pgPort)
	}
	client := fmt.Sprintf(`        serverName: %s
        rootCaFiles: [%q]
`, serverName, ts.serverCA)
	cfg := `log:
  stdout: true
  level: warn
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4
  datastores:
    default:
` + store("temporal") + `    visibility:
` + store("temporal_visibility") + fmt.Sprintf(`global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  tls:
    frontend:
      server:
        certFile: %q
        keyFile: %q
        clientCaFiles: [%q]
        requireClientAuth: true
      client:
`, ts.cert.CertFile, ts.cert.KeyFile, ts.clientCA) + client + fmt.Sprintf(`    systemWorker:
      certFile: %q
      keyFile: %q
      client:
`, ts.system.CertFile, ts.system.KeyFile) + client + fmt.Sprintf(`services:
  frontend:
    rpc: {grpcPort: %d, httpPort: %d, membershipPort: %d, bindOnLocalHost: true}
  history:
    rpc: {grpcPort: %d, membershipPort: %d, bindOnLocalHost: true}
  matching:
    rpc: {grpcPort: %d, membershipPort: %d, bindOnLocalHost: true}
  worker:
    rpc: {grpcPort: %d, membershipPort: %d, bindOnLocalHost: true}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:%d"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: %q
  pollInterval: 10s
`, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7], p[8], p[0],
		filepath.Join(ts.dir, "config", "dynamic.yaml"))
	// Search attributes and namespaces become visible at once instead of
	// after the caches' refresh, so the test need not sleep.
	dynamic := `system.forceSearchAttributesCacheRefreshOnRead:
  - value: true
system.namespaceCacheRefreshInterval:
  - value: 1s
`
	for name, body := range map[string]string{"production.yaml": cfg, "dynamic.yaml": dynamic} {
		err := os.WriteFile(filepath.Join(ts.dir, "config", name), []byte(body), 0o644)
		if err != nil {
			t.Fatal(err)
		}
	}
}

// start runs the server and waits until its frontend answers over mTLS.
func (ts *temporalServer) start(t *testing.T) {
	t.Helper()
	ts.starts++
	name := fmt.Sprintf("temporal-server-%d", ts.starts)
	bin := filepath.Join(repoRoot, "bin", "temporal-server")
	ts.proc = startProc(t, ts.logs, name, nil, nil, bin,
		"--root", ts.dir, "--config", "config", "--env", "production", "--allow-no-auth", "start")
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
			HostPort:          ts.addr(),
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

// probeTLS is the test's own client identity: a client certificate the
// frontend's client CA signed.
func (ts *temporalServer) probeTLS() *tls.Config {
	files := tlsconf.Files{
		CA:         ts.serverCA,
		Cert:       ts.system.CertFile,
		Key:        ts.system.KeyFile,
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

// prepareNamespace registers the default namespace and the bakes' search
// attributes, which the dev server gets from its flags.
func (ts *temporalServer) prepareNamespace(t *testing.T, tc *tls.Config) {
	t.Helper()
	opts := client.Options{
		HostPort:          ts.addr(),
		ConnectionOptions: client.ConnectionOptions{TLS: tc},
		Logger:            quiet(),
	}
	nc, err := client.NewNamespaceClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	var last error
	waitFor(t, time.Minute, "namespace registration", func() bool {
		last = nc.Register(context.Background(), &workflowservice.RegisterNamespaceRequest{
			Namespace:                        devstack.Namespace,
			WorkflowExecutionRetentionPeriod: durationpb.New(24 * time.Hour),
		})
		return last == nil || strings.Contains(last.Error(), "already exists")
	})
	c := ts.client(t, tc)
	waitFor(t, time.Minute, "search attributes", func() bool {
		sa := map[string]enums.IndexedValueType{}
		for _, a := range devstack.SearchAttributes {
			sa[a.Name] = enums.INDEXED_VALUE_TYPE_KEYWORD
		}
		addition := &operatorservice.AddSearchAttributesRequest{
			Namespace:        devstack.Namespace,
			SearchAttributes: sa,
		}
		_, err := c.OperatorService().AddSearchAttributes(context.Background(), addition)
		return err == nil || strings.Contains(err.Error(), "already exists")
	})
}

// client dials the frontend as the test.
func (ts *temporalServer) client(t *testing.T, tc *tls.Config) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{
		HostPort:          ts.addr(),
		Namespace:         devstack.Namespace,
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
