package cli

import (
	"os"

	"github.com/whestbake/whestbake/internal/cmdline"
	"github.com/whestbake/whestbake/internal/hub"
)

// whestbenchFlags are the flags of whestbench's `whest dataset` verbs that
// the same verbs here do not take, with what a whestbench user does
// instead. The verbs are those of src/whestbench/cli.py of
// github.com/AIcrowd/whestbench, v0.16.0, the same in v0.16.2.
// internal/pyjudge's TestWhestbenchFlagTablesMatchInstalledWhest holds it
// to the installed whestbench's `whest dataset VERB --help`. They are the
// hints of unknown flags, in cmdline.Strict, and docs/WHESTBENCH.md's
// table "Flags of whestbench's" lists them: TestWhestbenchFlagsDocumented
// keeps the two equal.
var whestbenchFlags = []cmdline.FlagHint{
	{Command: "whestbake dataset bake", Flag: "torch",
		Hint: "whestbake has no torch backend: " +
			"--device cuda bakes on the GPU with its CUDA engine, " +
			"--device auto (the default) picks it where it pays"},
	{Command: "whestbake dataset bake", Flag: "compile",
		Hint: "whestbake's CUDA engine always runs its compiled fused kernel: leave --compile out"},
	{Command: "whestbake dataset bake", Flag: "mlps-per-batch",
		Hint: "whestbake sizes its batches itself: " +
			"--threads sets the CPU threads and --max-memory the memory a bake may use"},
	{Command: "whestbake dataset download", Flag: "revision",
		Hint: "whestbake takes the revision in SRC: hf://OWNER/NAME@REVISION"},
	{Command: "whestbake dataset info", Flag: "revision",
		Hint: "whestbake takes the revision in SOURCE: hf://OWNER/NAME@REVISION"},
	{Command: "whestbake dataset download", Flag: "token", Hint: tokenHint},
	{Command: "whestbake dataset upload", Flag: "token", Hint: tokenHint},
}

// tokenHint is whestbench's --token here: a token on a command line shows
// in ps and in the shell's history.
const tokenHint = "whestbake never takes a Hub token on the command line: set " + hub.TokenEnv +
	" or pass --token-file FILE"

// hubRepoHint refuses src, a dataset source that is not a local path but
// a Hub repository id as whestbench takes it, such as
// AIcrowd/whestbench-public, saying how whestbake writes it; nil for
// anything else.
func hubRepoHint(src string) error {
	if hub.CheckRepoID(src) != nil {
		return nil
	}
	if _, err := os.Stat(src); err == nil {
		return nil
	}
	return cmdline.Usagef("%q is not a directory here; "+
		"as a Hugging Face Hub repository (whestbench's form), "+
		"whestbake writes it hf://%s (hf://%s@REVISION for a revision)", src, src, src)
}
