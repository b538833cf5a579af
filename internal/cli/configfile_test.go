package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/whestbake/whestbake/internal/settings"
)

// splitParquet is the one data file of a single-split dataset.
func splitParquet(t *testing.T, dir, split string) []byte {
	t.Helper()
	return readBytes(t, filepath.Join(dir, "data", split+"-00000-of-00001.parquet"))
}

// One file drives every verb: `dataset bake` given the Temporal demo's
// config bakes the split --split names exactly as the same settings spelt
// out as flags do.
func TestTheTemporalConfigBakesASplitLocally(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	cfg := filepath.Join("..", "..", "configs", "demo.yaml")
	fromFile := filepath.Join(dir, "file")
	mustRun(t, "dataset", "bake", "--config-file", cfg, "--split", "holdout",
		"--output", fromFile, "--threads", "1")
	fromFlags := filepath.Join(dir, "flags")
	mustRun(t, "dataset", "bake", "--width", "64", "--depth", "4", "--n-samples", "200_000",
		"--sampler", "philox", "--split", "holdout", "--config", "holdout", "--n-mlps", "3",
		"--seed", "2", "--output", fromFlags, "--threads", "1")
	if !bytes.Equal(splitParquet(t, fromFile, "holdout"), splitParquet(t, fromFlags, "holdout")) {
		t.Fatal("the split baked from the config file differs " +
			"from the same settings given as flags")
	}
	md := string(readBytes(t, filepath.Join(fromFile, "metadata.json")))
	for _, want := range []string{`"split": "holdout"`, `"config": "holdout"`, `"n_mlps": 3`} {
		if !strings.Contains(md, want) {
			t.Errorf("metadata lacks %s", want)
		}
	}

	// Two splits and no --split: which one is the user's to say.
	code, _, errs := run(t, "dataset", "bake", "--config-file", cfg,
		"--output", filepath.Join(dir, "x"))
	const twoSplits = "bake.splits has 2 splits (public, holdout): choose one with --split"
	if code != 2 || !strings.Contains(errs, twoSplits) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	code, _, errs = run(t, "dataset", "bake", "--config-file", cfg, "--split", "nosuch",
		"--output", filepath.Join(dir, "x"))
	const noSuchSplit = "--split nosuch: the config file's bake.splits has no such split " +
		"(it has public, holdout)"
	if code != 2 || !strings.Contains(errs, noSuchSplit) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// Flags win over WHESTBAKE_<SECTION>_<KEY>, which wins over the file, which
// wins over the flag's default.
func TestConfigKeyPrecedence(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	cfg := writeFile(t, filepath.Join(dir, "c.yaml"), `
bake:
  width: 4
  depth: 2
  n-samples: 1e3
  splits: [{name: mine, n-mlps: 2, seed: 3}]
worker: {threads: 1}
`)
	t.Setenv("WHESTBAKE_BAKE_DEPTH", "3")
	t.Setenv("WHESTBAKE_BAKE_WIDTH", "5")
	out := filepath.Join(dir, "out")
	mustRun(t, "dataset", "bake", "--config-file", cfg, "--output", out, "--width", "6")
	md := string(readBytes(t, filepath.Join(out, "metadata.json")))
	for _, want := range []string{`"split": "mine"`, `"n_mlps": 2`, `"depth": 3`, `"width": 6`} {
		if !strings.Contains(md, want) {
			t.Errorf("metadata lacks %s:\n%s", want, md)
		}
	}
	// A required value missing everywhere names all three places it can come from.
	code, _, errs := run(t, "dataset", "bake", "--n-mlps", "1", "--width", "4", "--depth", "2",
		"--output", filepath.Join(dir, "y"))
	const everywhere = "--n-samples is required " +
		"(or bake.n-samples in the config file, or WHESTBAKE_BAKE_N_SAMPLES)"
	if code != 2 || !strings.Contains(errs, everywhere) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// The flag-value files and WHESTBAKE_<FLAG> variables of an older whestbake
// are refused with the way forward, never silently ignored: a width that
// stopped being read would bake another dataset.
func TestTheOldSchemaIsRefusedWithItsMigration(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	old := writeFile(t, filepath.Join(dir, "old.yaml"),
		"n-mlps: 2\nwidth: 4\ndepth: 2\nn-samples: 1e3\nseed: 3\n")
	code, _, errs := run(t, "dataset", "bake", "--config-file", old,
		"--output", filepath.Join(dir, "out"))
	if code == 0 ||
		!strings.Contains(errs, "n-mlps (line 1), width (line 2)") ||
		!strings.Contains(errs, "whestbake config migrate FILE") {
		t.Errorf("old file: exit %d, stderr %q", code, errs)
	}
	toml := writeFile(t, filepath.Join(dir, "old.toml"), "width = 4\n")
	code, _, errs = run(t, "calibrate", "--config-file", toml)
	if code == 0 || !strings.Contains(errs, "whestbake config migrate FILE") {
		t.Errorf("old TOML file: exit %d, stderr %q", code, errs)
	}
	t.Setenv("WHESTBAKE_N_SAMPLES", "1e3")
	t.Setenv("WHESTBAKE_OUTPUT", "somewhere")
	code, _, errs = run(t, append(bakeArgs(filepath.Join(dir, "out")), "--n-samples", "1e3")...)
	for _, want := range []string{
		"WHESTBAKE_N_SAMPLES is the variable of --n-samples in an older whestbake " +
			"and is no longer read: " +
			"set WHESTBAKE_BAKE_N_SAMPLES (config key bake.n-samples) or pass --n-samples",
		"WHESTBAKE_OUTPUT is the variable of --output in an older whestbake " +
			"and is no longer read: pass --output",
	} {
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("exit %d, stderr %q; want %q", code, errs, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Error("a refused command wrote its output")
	}
}

// `config migrate` turns an old flag-value file into the sections, and the
// result bakes what the old values bake as flags.
func TestConfigMigrateKeepsWhatTheOldFileBaked(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	seeds := filepath.Join(dir, "seeds.json")
	mustRun(t, "dataset", "generate-seeds", "--n-mlps", "3", "--seed", "9", "--output", seeds)
	old := writeFile(t, filepath.Join(dir, "old.json"),
		`{"n-mlps": 3, "width": 5, "depth": 2, "n-samples": "2_000", `+
			`"sampler": "numpy", "split": "dev", "config": "small",
		  "mlp-seeds": "`+seeds+`", "threads": 1, "output": "ignored-dir", "nosuch": 1}`)
	migrated := mustRun(t, "config", "migrate", old)
	for _, want := range []string{
		"  width: 5\n",
		"  sampler: numpy\n",
		"      name: dev\n",
		"      seeds-file: " + seeds + "\n",
		"worker:\n  threads: 1\n",
		"#   --output ignored-dir",
		`ignored them: "nosuch"`,
	} {
		if !strings.Contains(migrated, want) {
			t.Errorf("migrated file lacks %q:\n%s", want, migrated)
		}
	}
	cfg := filepath.Join(dir, "new.yaml")
	mustRun(t, "config", "migrate", old, "--output", cfg)
	if got := string(readBytes(t, cfg)); got != migrated {
		t.Errorf("--output wrote another file than stdout got:\n%s", got)
	}
	fromFile := filepath.Join(dir, "file")
	mustRun(t, "dataset", "bake", "--config-file", cfg, "--output", fromFile)
	fromFlags := filepath.Join(dir, "flags")
	mustRun(t, "dataset", "bake", "--n-mlps", "3", "--width", "5", "--depth", "2",
		"--n-samples", "2_000", "--sampler", "numpy", "--split", "dev", "--config", "small",
		"--mlp-seeds", seeds, "--threads", "1", "--output", fromFlags)
	if !bytes.Equal(splitParquet(t, fromFile, "dev"), splitParquet(t, fromFlags, "dev")) {
		t.Fatal("the migrated file bakes another dataset than the old values as flags")
	}
	code, _, errs := run(t, "config", "migrate", old, "--verb", "nosuch verb")
	if code != 2 || !strings.Contains(errs, `--verb "nosuch verb": not a whestbake verb`) {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}

// Every flag that defaults to a config key names a key of the schema, no
// secret (secrets are never flags), and its help shows the key.
func TestEveryFlagKeyIsAConfigKey(t *testing.T) {
	keys := settings.Keys()
	var walk func(c *cobra.Command)
	bound := 0
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			key := keyOf(f)
			if key == "" {
				return
			}
			bound++
			switch {
			case !slices.Contains(keys, key):
				t.Errorf("%s --%s: %s is not a config key", c.CommandPath(), f.Name, key)
			case strings.HasSuffix(key, "secret-key") ||
				strings.HasSuffix(key, "api-key") ||
				strings.HasSuffix(key, "access-key"):
				t.Errorf("%s --%s: %s is a credential", c.CommandPath(), f.Name, key)
			case !strings.Contains(f.Usage, "[config: "+key+"]"):
				t.Errorf("%s --%s: help does not name %s", c.CommandPath(), f.Name, key)
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(&bytes.Buffer{}, &bytes.Buffer{}))
	if bound < 20 {
		t.Errorf("only %d flags default to config keys", bound)
	}
}

// docs/CLI.md lists every flag that defaults to a config key, verb by verb,
// as the code binds them.
func TestCLIDocListsEveryFlagKey(t *testing.T) {
	doc := string(readBytes(t, filepath.Join("..", "..", "docs", "CLI.md")))
	var rows []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		var pairs []string
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if key := keyOf(f); key != "" {
				pairs = append(pairs, "`--"+f.Name+"` "+key)
			}
		})
		if len(pairs) > 0 {
			verb := strings.TrimPrefix(c.CommandPath(), "whestbake ")
			rows = append(rows, "| `"+verb+"` | "+strings.Join(pairs, ", ")+" |")
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRoot(&bytes.Buffer{}, &bytes.Buffer{}))
	var missing []string
	for _, r := range rows {
		if !strings.Contains(doc, r+"\n") {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		t.Errorf("docs/CLI.md's table of flags with config keys lacks these rows "+
			"(the whole table is):\n%s", strings.Join(rows, "\n"))
	}
}

// The payloads: a value, and a key, holding a newline and then
// YAML keys, and a value that is a shell command substitution. The
// migrated file is YAML whose only live keys are the old file's keys under
// their new names (parsed back, and loaded as every verb loads it); the
// command-line hint quotes each value for a POSIX shell, so that sh sees
// the values as they were and runs nothing.
func TestConfigMigrateCannotBeInjected(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	pwned := filepath.Join(dir, "PWNED")
	inject := "x\nrelease:\n  hub:\n    repo: evil/pwn\n    endpoint: https://evil.example\n"
	old := writeFile(t, filepath.Join(dir, "old.json"),
		`{"width": 4, "output": `+jsonQuote(inject)+`}`)
	oldKey := writeFile(t, filepath.Join(dir, "old-key.json"),
		`{"width": 4, "a\nrelease:\n  tag: pwned\nb": 1}`)
	oldShell := writeFile(t, filepath.Join(dir, "old-shell.json"),
		`{"width": 4, "slice": "$(touch `+pwned+`)"}`)
	for _, file := range []string{old, oldKey, oldShell} {
		migrated := mustRun(t, "config", "migrate", file)
		var doc map[string]any
		if err := yaml.Unmarshal([]byte(migrated), &doc); err != nil {
			t.Fatalf("the migrated file is not YAML: %v\n%s", err, migrated)
		}
		if len(doc) != 1 || doc["bake"] == nil {
			t.Errorf("the migrated file's live keys are %v; want bake alone:\n%s", doc, migrated)
		}
		cfg := writeFile(t, filepath.Join(dir, "new.yaml"), migrated)
		loaded, err := settings.Read(cfg)
		if err != nil ||
			loaded.Release.Hub.Repo != "" ||
			loaded.Release.Hub.Endpoint != settings.Default().Release.Hub.Endpoint ||
			loaded.Release.Tag != "" {
			t.Errorf("the migrated file sets release keys: %v, %+v", err, loaded.Release)
		}
	}
	// The hint's arguments, one line once the comment is taken off, go
	// through sh as they are printed.
	migrated := mustRun(t, "config", "migrate", oldShell)
	var hint string
	for _, line := range strings.Split(migrated, "\n") {
		if rest, ok := strings.CutPrefix(line, "#   --slice "); ok {
			hint = "--slice " + rest
		}
	}
	if hint == "" {
		t.Fatalf("no --slice hint:\n%s", migrated)
	}
	out, err := exec.Command("sh", "-c", "printf '%s\\n' "+hint).CombinedOutput()
	if err != nil || string(out) != "--slice\n$(touch "+pwned+")\n" {
		t.Errorf("sh reads the hint %q as %q (%v)", hint, out, err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the hint ran a command")
	}
}
