package e2e

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
)

// badInput is a bake the starter must refuse before anything is written.
type badInput struct {
	name  string
	id    string                   // --id; "" = a fresh valid one
	spoil func(cfg map[string]any) // breaks the config
	env   []string                 // breaks the environment
	want  []string                 // the message must say all of these
}

func section(cfg map[string]any, name string) map[string]any { return cfg[name].(map[string]any) }

func firstSplit(cfg map[string]any) map[string]any {
	return section(cfg, "bake")["splits"].([]map[string]any)[0]
}

// TestBadInputsFailFastAndClearly: each mistake is refused within seconds
// with a message naming what to fix, leaves no workflow (status says so) and
// writes nothing, neither artifacts nor a release.
func TestBadInputsFailFastAndClearly(t *testing.T) {
	s := newStack(t)
	s.startWorker("control")
	s.startWorker("gpu")
	closedPort := strconv.Itoa(devtest.FreePorts(t, 1)[0]) // nothing listens here
	seedsFile := func(content string) func(map[string]any) {
		p := filepath.Join(s.dir, fmt.Sprintf("seeds-%d.json", len(content)))
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return func(cfg map[string]any) {
			sp := firstSplit(cfg)
			delete(sp, "seed")
			sp["seeds-file"] = p
		}
	}
	set := func(sec, key string, v any) func(map[string]any) {
		return func(cfg map[string]any) { section(cfg, sec)[key] = v }
	}
	cases := []badInput{
		{name: "zero width", spoil: set("bake", "width", 0), want: []string{"bake.width"}},
		{name: "n-samples not a number", spoil: set("bake", "n-samples", "lots"),
			want: []string{"n-samples", "lots"}},
		{name: "zero slice size", spoil: set("bake", "slice-size", 0),
			want: []string{"bake.slice-size"}},
		{name: "negative max in flight", spoil: set("bake", "max-in-flight", -2),
			want: []string{"bake.max-in-flight"}},
		{name: "unknown sampler", spoil: set("bake", "sampler", "gaussian"),
			want: []string{"bake.sampler", "gaussian"}},
		{name: "bad split name",
			spoil: func(cfg map[string]any) { firstSplit(cfg)["name"] = "Public Split" },
			want:  []string{"Public Split"}},
		{name: "duplicate split names", spoil: func(cfg map[string]any) {
			sp := section(cfg, "bake")["splits"].([]map[string]any)
			sp[1]["name"] = sp[0]["name"]
		}, want: []string{"public", "appears twice"}},
		{name: "seeds file with a repeated seed", spoil: seedsFile("[1, 2, 2, 3, 4]"),
			want: []string{"duplicate"}},
		{name: "seeds file of the wrong length", spoil: seedsFile("[1, 2]"),
			want: []string{"2 seeds", "5"}},
		{name: "seeds file missing", spoil: func(cfg map[string]any) {
			seedsFile("[9]")(cfg)
			firstSplit(cfg)["seeds-file"] = filepath.Join(s.dir, "no-such-seeds.json")
		}, want: []string{"no-such-seeds.json"}},
		{name: "release without a tag", spoil: set("release", "tag", ""),
			want: []string{"release.tag"}},
		{name: "bad bake id", id: "two/parts", want: []string{"two/parts"}},
		{name: "artifact bucket missing", spoil: set("s3", "bucket", "no-such-bucket"),
			want: []string{"no-such-bucket"}},
		{name: "release bucket missing", spoil: set("release", "bucket", "no-such-releases"),
			want: []string{"release.bucket", "no-such-releases"}},
		{name: "Temporal unreachable", spoil: set("temporal", "address", "127.0.0.1:"+closedPort),
			want: []string{"127.0.0.1:" + closedPort}},
		{name: "S3 unreachable", spoil: set("s3", "endpoint", "127.0.0.1:"+closedPort),
			want: []string{"127.0.0.1:" + closedPort}},
		{name: "wrong S3 secret", env: []string{"WHESTBAKE_S3_SECRET_KEY=not-the-" + s.secret},
			want: []string{"WHESTBAKE_S3_SECRET_KEY"}},
		{name: "no S3 credentials",
			env:  []string{"WHESTBAKE_S3_ACCESS_KEY=", "WHESTBAKE_S3_SECRET_KEY="},
			want: []string{"s3.secret-key"}},
	}
	statusCfg := s.writeConfig("status", s.baseConfig())
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := s.sub(t)
			id := c.id
			if id == "" {
				id = fmt.Sprintf("bad-%02d", i)
			}
			b := smallBake(id, 500)
			cfg := s.bakeConfigMap(b)
			if c.spoil != nil {
				c.spoil(cfg)
			}
			cfgFile := s.writeConfig(fmt.Sprintf("bad-%02d", i), cfg)
			r := s.whestbake(c.env, "bake", "--config-file", cfgFile, "--id", id, "--wait")
			if r.code == 0 {
				t.Fatalf("accepted:\n%s", r)
			}
			if limit := 15 * time.Second; r.took > limit {
				t.Errorf("took %s to refuse, want under %s", r.took, limit)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("message does not mention %q:\n%s", w, r.stderr)
				}
			}
			said := r.stdout + r.stderr
			if strings.Contains(said, "goroutine ") || strings.Contains(said, s.secret) {
				t.Errorf("output holds a stack trace or the secret:\n%s", r)
			}
			// No such bake; and an ID that cannot be one is a usage error (exit 2).
			st := s.whestbake(nil, "status", id, "--config-file", statusCfg)
			if c.id != "" && (st.code != 2 || !strings.Contains(st.stderr, "is not usable")) ||
				c.id == "" && (st.code == 0 || !strings.Contains(st.stderr, "no bake")) {
				t.Errorf("`whestbake status %s` should say there is no such bake, "+
					"or that %s cannot be one:\n%s", id, id, st)
			}
			s.assertNoArtifacts(t, id)
			s.assertNothingReleased(t, id)
		})
	}
}

// assertNoArtifacts: bake id wrote nothing to the artifact bucket.
func (s *stack) assertNoArtifacts(t *testing.T, id string) {
	t.Helper()
	if objs, err := s.art.List(context.Background(), bakePrefix(id)); err != nil || len(objs) > 0 {
		t.Errorf("bake %s wrote %v (%v)", id, objs, err)
	}
}

// assertNothingReleased: nothing exists at bake id's release tag.
func (s *stack) assertNothingReleased(t *testing.T, id string) {
	t.Helper()
	released := keys.Release(releasePrefix, "e2e", id) + "/"
	if objs, err := s.rel.List(context.Background(), released); err != nil || len(objs) > 0 {
		t.Errorf("bake %s released %v (%v)", id, objs, err)
	}
}

// bakePrefix is the folder every object of bake id lives under.
func bakePrefix(id string) string { return path.Dir(keys.Bake(id).Dataset()) + "/" }
