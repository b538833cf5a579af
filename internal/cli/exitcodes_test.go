package cli

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// executeEnv makes the test binary run whestbake itself (TestMain), for the
// cases that need a process of their own: a signal.
const executeEnv = "WHESTBAKE_TEST_EXECUTE"

func TestMain(m *testing.M) {
	if os.Getenv(executeEnv) == "1" {
		os.Exit(Execute(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The exit codes of docs/CLI.md: 0 success, 1 failure, 2 a malformed
// command line wherever cobra or a verb finds it, 130 after Ctrl-C; and
// the words a usage error must say: a suggestion for a mistyped verb, every
// missing flag at once, what a verb's arguments are, whestbench's forms.
func TestExitCodes(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	missing := filepath.Join(dir, "missing")
	cfg := writeFile(t, filepath.Join(dir, "c.yaml"), starterConfigYAML)
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		args []string
		code int
		want []string // substrings of stdout and stderr
	}{
		{nil, 0, []string{"Usage:"}},
		{[]string{"--help"}, 0, []string{"Usage:"}},
		{[]string{"dev"}, 0, []string{"Usage:"}},
		{[]string{"dataset", "generate-seeds",
			"--n-mlps", "2", "--output", filepath.Join(dir, "s.json")}, 0, nil},
		{[]string{"frobnicate"}, 2,
			[]string{`unknown command "frobnicate" for "whestbake": use one of bake, bench,`}},
		{[]string{"dataset", "frobnicate"}, 2,
			[]string{`unknown command "frobnicate" for "whestbake dataset"`}},
		{[]string{"dev", "frobnicate"}, 2,
			[]string{`unknown command "frobnicate" for "whestbake dev"`}},
		{[]string{"stauts", "x"}, 2, []string{`unknown command "stauts" for "whestbake": ` +
			`did you mean "status"? (or use one of bake,`}},
		{[]string{"merge"}, 2, []string{`did you mean "dataset merge"?`}},
		{[]string{"dataset", "verfy"}, 2, []string{`did you mean "dataset verify"?`}},
		// --help after an unknown verb is no help: cobra would show the parent's.
		{[]string{"dataset", "nosuch", "--help"}, 2, []string{
			`unknown command "nosuch" for "whestbake dataset": use one of ` + datasetVerbsSorted()}},
		{[]string{"dev", "nosuch", "-h"}, 2,
			[]string{`unknown command "nosuch" for "whestbake dev": use one of down, status, up`}},
		{[]string{"frobnicate", "--help"}, 2,
			[]string{`unknown command "frobnicate" for "whestbake": use one of bake, bench,`}},
		{[]string{"dataset", "--help", "nosuch"}, 2,
			[]string{`unknown command "nosuch" for "whestbake dataset"`}},
		{[]string{"dataset", "-h", "--config-file", "x.yaml", "nosuch"}, 2,
			[]string{`unknown command "nosuch" for "whestbake dataset"`}},
		{[]string{"help", "dataset", "nosuch"}, 2,
			[]string{`unknown command "nosuch" for "whestbake dataset"`}},
		{[]string{"help", "dataset", "bake"}, 0, []string{"whestbake dataset bake --n-mlps N"}},
		{[]string{"help", "dataset"}, 0, []string{"whestbake dataset [command]"}},
		{[]string{"dataset", "--config-file", "x.yaml", "--help"}, 0,
			[]string{"whestbake dataset [command]"}},
		{[]string{"dataset", "--help"}, 0, []string{"whestbake dataset [command]"}},
		{[]string{"dataset", "bake", "--help"}, 0, []string{"whestbake dataset bake --n-mlps N"}},
		{[]string{"dataset"}, 2, []string{"dataset needs a verb"}},
		{[]string{"list", "--frobnicate"}, 2, []string{"unknown flag: --frobnicate"}},
		{[]string{"dataset", "inspect", "-z", "x"}, 2, []string{"unknown shorthand flag"}},
		{[]string{"list", "--limit", "many"}, 2, []string{`invalid argument "many" for "--limit"`}},
		{[]string{"list", "--limit", "0"}, 2, []string{"--limit must be at least 1"}},
		{[]string{"watch", "--interval"}, 2, []string{"flag needs an argument"}},
		{[]string{"status"}, 2, []string{"whestbake status needs ID; usage: whestbake status ID"}},
		{[]string{"cancel", "a", "b"}, 2,
			[]string{`whestbake cancel takes ID, got "a" "b" (accepts 1 arg(s), received 2)`}},
		{[]string{"status", "my bake", "--config-file", cfg}, 2,
			[]string{`whestbake status takes ID, got "my bake"`, "is not usable"}},
		{[]string{"bake", "--config-file", cfg, "--id", "my bake"}, 2,
			[]string{`bake.id "my bake" is not usable`}},
		{[]string{"dataset", "merge"}, 2, []string{
			"whestbake dataset merge needs the partials to merge (PARTIAL...",
			"and --output; usage: whestbake dataset merge PARTIAL... --output DIR"}},
		{[]string{"dataset", "merge", "--output", "x"}, 2,
			[]string{"dataset merge needs the partials to merge"}},
		{[]string{"dataset", "merge", dir}, 2, []string{"--output is required"}},
		{[]string{"list", "extra"}, 2, []string{`whestbake list takes no arguments, got "extra"`}},
		{[]string{"dataset", "bake", "x"}, 2,
			[]string{`whestbake dataset bake takes no arguments, got "x"`}},
		{[]string{"dataset", "bake", "--width", "4"}, 2, []string{"4 required flags are missing:\n",
			"  --n-mlps (or a split's n-mlps", "  --n-samples (or bake.n-samples",
			"  --depth (or", "  --output\n"}},
		{[]string{"dataset", "bake",
			"--n-mlps", "2", "--n-samples", "1e3", "--width", "0", "--depth", "1", "-o", missing},
			2, []string{"--width is missing or 0"}},
		{bakeArgs(out, "--slice", "2/2"), 2, []string{"--slice 2/2: need 0 <= K < N"}},
		{bakeArgs(out, "--mlp-range", "3-9"), 2, []string{"--mlp-range 3-9"}},
		{[]string{"calibrate", "--width", "99999", "--device", "cpu"}, 2,
			[]string{"--width = 99999: must be in [1, 16384] (neurons per layer)"}},
		{[]string{"calibrate", "--n-mlps", "0", "--device", "cpu"}, 2,
			[]string{"--n-mlps is missing or 0"}},
		{[]string{"dataset", "inspect", missing}, 1, []string{missing}},
		{[]string{"dataset", "report"}, 2, []string{"whestbake dataset report needs DIR"}},
		{[]string{"dataset", "report", missing}, 1, []string{missing}},
		// whestbench's habits, answered with whestbake's way.
		{[]string{"dataset", "download", "hf://a/b", "--output", out, "--token", "hf_x"}, 2,
			[]string{"unknown flag --token: " +
				"whestbake never takes a Hub token on the command line: " +
				"set HF_TOKEN or pass --token-file FILE"}},
		{[]string{"dataset", "info", "hf://a/b", "--revision", "v1"}, 2,
			[]string{"unknown flag --revision: " +
				"whestbake takes the revision in SOURCE: hf://OWNER/NAME@REVISION"}},
		{append(bakeArgs(out), "--torch"), 2,
			[]string{"unknown flag --torch: whestbake has no torch backend: --device cuda"}},
		{[]string{"dataset", "download", "AIcrowd/whestbench-public", "--output", out}, 2,
			[]string{"whestbake writes it hf://AIcrowd/whestbench-public"}},
		{[]string{"dataset", "download", "nothing-at-all", "--output", out}, 2,
			[]string{"SRC is hf://OWNER/NAME[@REVISION] (the Hugging Face Hub), s3://"}},
		{[]string{"dataset", "info", "AIcrowd/whestbench-public"}, 2,
			[]string{"whestbake writes it hf://AIcrowd/whestbench-public"}},
	} {
		code, stdout, errs := run(t, c.args...)
		if code != c.code {
			t.Errorf("%q: exit %d, want %d; stdout:\n%s\nstderr:\n%s",
				c.args, code, c.code, stdout, errs)
		}
		for _, w := range c.want {
			if !strings.Contains(stdout+errs, w) {
				t.Errorf("%q: output lacks %q; stdout:\n%s\nstderr:\n%s", c.args, w, stdout, errs)
			}
		}
		if code == 2 && strings.Contains(stdout, "Usage:") {
			t.Errorf("%q: a usage error printed the help:\n%s", c.args, stdout)
		}
	}
	t.Run("Ctrl-C exits 130", func(t *testing.T) {
		testInterrupt(t, filepath.Join(dir, "interrupted"))
	})
}

// testInterrupt sends SIGINT to a long local bake, as Ctrl-C does: it must
// exit 130 with one short line, leaving no output behind.
func testInterrupt(t *testing.T, output string) {
	cmd := exec.Command(os.Args[0], "dataset", "bake", "--n-mlps", "1", "--n-samples", "1e9",
		"--width", "64", "--depth", "4", "--threads", "1", "--output", output)
	cmd.Env = append(os.Environ(), executeEnv+"=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	for lines.Scan() && !strings.HasPrefix(lines.Text(), "Baking ") {
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("the bake did not stop within a minute of SIGINT")
	}
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d after SIGINT, want 130\n%s", code, stderr.String())
	}
	if got := stderr.String(); got != "error: interrupted (Ctrl-C)\n" {
		t.Errorf("stderr after SIGINT = %q, want one short line", got)
	}
	if _, err := os.Stat(output); !os.IsNotExist(err) {
		t.Errorf("an interrupted bake left %s (%v)", output, err)
	}
}

// Without a terminal, a local bake prints a progress line now and then,
// whose share done never goes down.
func TestProgressLinesWithoutATerminal(t *testing.T) {
	defer func(every time.Duration) { progressEvery = every }(progressEvery)
	progressEvery = time.Millisecond
	t.Setenv("WHESTBAKE_NO_PROGRESS", "")
	out := filepath.Join(t.TempDir(), "out")
	code, _, errs := run(t, "dataset", "bake", "--n-mlps", "3", "--n-samples", "200_000",
		"--width", "16", "--depth", "3", "--chunk-size", "1000", "--threads", "1", "--output", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	re := regexp.MustCompile(`(?m)^\d\d:\d\d:\d\d Sampling ground truth: ` +
		`([0-9.]+)% \((\d+)/600000 samples\), \S+`)
	found := re.FindAllStringSubmatch(errs, -1)
	if len(found) < 2 {
		t.Fatalf("want progress lines on stderr, got:\n%s", errs)
	}
	last := int64(-1)
	for _, m := range found {
		n, _ := strconv.ParseInt(m[2], 10, 64)
		if n < last {
			t.Errorf("progress went back from %d to %d:\n%s", last, n, errs)
		}
		last = n
	}
}
