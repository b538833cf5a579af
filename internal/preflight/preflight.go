// Package preflight is the step between a validated configuration and any
// work: it checks what internal/settings cannot check without the
// filesystem or the host. The files the config names are read and must hold
// what they should: the TLS PEM files of temporal.tls.* and s3.ca-file,
// the splits' seeds files, the Hub token file. The worker's scratch
// directory must take files, and worker.max-memory left unset becomes the
// host's memory limit.
//
// Its problems join the validator's in one settings.Error, worded and keyed
// as the validator words them, so that a run lists everything wrong at
// once: the worker through Worker and the starter's verbs through Bake,
// Temporal and Store call it in place of the validators, before they
// connect or write.
package preflight

import (
	"errors"
	"fmt"
	"slices"

	"github.com/whestbake/whestbake/bakeapi"
	"github.com/whestbake/whestbake/internal/hostinfo"
	"github.com/whestbake/whestbake/internal/hub"
	"github.com/whestbake/whestbake/internal/mlps"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/tlsconf"
)

// Bake checks everything `whestbake bake` needs before it writes or starts
// anything, and returns the workflow input.
func Bake(cfg settings.Config) (bakeapi.BakeInput, error) {
	cfg = hostDefaults(cfg)
	p := settings.ProblemsOf(cfg.Validate())
	temporalFiles(&p, cfg.Temporal)
	storeFiles(&p, cfg)
	seedsFiles(&p, cfg.Bake.Splits)
	if err := p.Err(); err != nil {
		return bakeapi.BakeInput{}, err
	}
	return settings.BakeInput(cfg)
}

// Worker checks everything a whestbake-worker needs before it connects,
// and returns cfg with the host's values of the keys it leaves unset.
func Worker(cfg settings.Config) (settings.Config, error) {
	cfg = hostDefaults(cfg)
	p := settings.ProblemsOf(cfg.ValidateWorker())
	temporalFiles(&p, cfg.Temporal)
	storeFiles(&p, cfg)
	scratchDir(&p, cfg.Worker)
	hubToken(&p, cfg)
	return cfg, p.Err()
}

// Temporal checks the Temporal connection alone, for status, watch, list
// and cancel.
func Temporal(cfg settings.Config) error {
	p := settings.ProblemsOf(cfg.ValidateTemporal())
	temporalFiles(&p, cfg.Temporal)
	return p.Err()
}

// Store checks the S3 settings alone, for dataset download and gc.
func Store(cfg settings.Config) error {
	p := settings.ProblemsOf(cfg.ValidateStore())
	storeFiles(&p, cfg)
	return p.Err()
}

// hostDefaults is cfg with the host's value of each key that defers to the
// host: worker.max-memory, unset, is this host's cgroup limit, else its
// memory. The starter refuses a shape above it, and the worker a slice.
func hostDefaults(cfg settings.Config) settings.Config {
	if cfg.Worker.MaxMemory == 0 {
		cfg.Worker.MaxMemory = settings.ByteSize(hostinfo.MemoryLimit())
	}
	return cfg
}

// temporalFiles reads the PEM files of temporal.tls.*, as the connection
// will in temporalconn.Config.ClientTLS.
func temporalFiles(p *settings.Problems, t settings.Temporal) {
	if _, err := t.Conn().ClientTLS(); err != nil {
		addTLS(p, err)
	}
}

// storeFiles reads s3.ca-file, as the store will in store.Config.ClientTLS.
func storeFiles(p *settings.Problems, cfg settings.Config) {
	if _, err := cfg.StoreConfig().ClientTLS(); err != nil {
		addTLS(p, err)
	}
}

// addTLS adds the problems of a tlsconf error under their keys.
func addTLS(p *settings.Problems, err error) {
	var te tlsconf.Error
	if !errors.As(err, &te) {
		*p = append(*p, err.Error())
		return
	}
	for _, x := range te {
		p.Addf(x.Key, "%s", x.Msg)
	}
}

// pathFix begins the advice for a file the config names that cannot be read.
const pathFix = "fix the path (relative paths are relative to the config file)"

// seedsFiles reads and parses every split's seeds file, as the starter
// will when it uploads them. A split that also sets a seed is left out:
// the validator reports that it sets both.
func seedsFiles(p *settings.Problems, splits []settings.Split) {
	for i, s := range splits {
		if s.SeedsFile == "" || s.Seed != nil {
			continue
		}
		key := settings.SplitKey(i) + ".seeds-file"
		n := int(s.NMLPs)
		data, err := mlps.ReadSeedsFile(s.SeedsFile, n)
		if err != nil {
			p.Addf(
				key,
				"cannot be read (%v): "+pathFix+
					" or generate one with `whestbake dataset generate-seeds --n-mlps %d`",
				err,
				n,
			)
			continue
		}
		if n < 1 {
			continue // the validator reports n-mlps
		}
		if _, err := mlps.ParseSeeds(s.SeedsFile, data, n); err != nil {
			p.Addf(key, "is invalid: %v", err)
		}
	}
}

// scratchFix is the advice for a scratch directory that does not take files.
const scratchFix = "point worker.scratch-dir at a writable directory " +
	"on a local disk with room for twice the largest split"

// scratchDir checks that the worker's scratch directory takes its files:
// asked at start, so that a missing disk or a wrong mode fails the worker
// with the key to fix, not a merge hours into a bake.
func scratchDir(p *settings.Problems, w settings.Worker) {
	err := checkScratch(w.Scratch())
	if err == nil {
		return
	}
	what := fmt.Sprintf("%q", w.ScratchDir)
	if w.ScratchDir == "" {
		what = fmt.Sprintf(
			"is unset, so the system's temporary directory %q (TMPDIR) is used, and it",
			w.Scratch(),
		)
	}
	p.Addf("worker.scratch-dir", "%s %v: "+scratchFix, what, err)
}

// hubToken reads release.hub.token-file on a worker that runs HubPush, of
// role control or all, which reads the token at each push: a named file
// must hold one now.
func hubToken(p *settings.Problems, cfg settings.Config) {
	file := cfg.Release.Hub.TokenFile
	role := cfg.Worker.Role
	if file == "" || (role != settings.RoleControl && role != settings.RoleAll) {
		return
	}
	if _, err := hub.Token(file, func(string) string { return "" }); err != nil {
		p.Addf("release.hub.token-file", "%v: "+pathFix+" or unset it to use %s", err, hub.TokenEnv)
	}
}

// Config checks cfg as `whestbake config check` does, offline: as the
// worker of cfg.Worker.Role reads it and, with asBake, as `whestbake bake`
// reads it, with every file it names read on this host. It connects to
// nothing. Each problem of either view is listed once.
func Config(cfg settings.Config, asBake bool) error {
	var p settings.Problems
	_, err := Worker(cfg)
	p = append(p, settings.ProblemsOf(err)...)
	if asBake {
		_, err := Bake(cfg)
		for _, x := range settings.ProblemsOf(err) {
			if !slices.Contains(p, x) {
				p = append(p, x)
			}
		}
	}
	return p.Err()
}
