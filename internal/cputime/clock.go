package cputime

import (
	"errors"
	"runtime"
)

// chainLoops is the loops of one addChain call: 100 additions each, about
// 30 ms at 3.5 GHz, short enough that the non-preemptible assembly does not
// hold up the runtime for long.
const chainLoops = 1_000_000

// CoreClock measures the clock the calling core runs at: a chain of adds
// additions, each depending on the one before and taking one cycle on
// every x86-64 core, timed in the thread's CPU time. That is the clock of
// this core under this load, not the nominal one nor the TSC's rate, which
// a VM's "cpu MHz" shows. The adds take a register operand, so no renamer
// can fold the chain into fewer operations; some cores fold dependent adds
// of immediates. It returns cycles per second.
func CoreClock(adds int64) (float64, error) {
	if !haveChain {
		return 0, errors.New("the core clock is measured on amd64 only")
	}
	if _, ok := Thread(); !ok {
		return 0, errors.New("the core clock needs a thread CPU clock, " +
			"which this OS does not offer (Linux and macOS do)")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	addChain(chainLoops / 10) // wake the core up from a lower clock
	loops := max(1, adds/100/chainLoops)
	t0, _ := Thread()
	for range loops {
		addChain(chainLoops)
	}
	t1, _ := Thread()
	if t1 <= t0 {
		return 0, errors.New("the thread CPU clock did not advance")
	}
	return float64(loops*chainLoops*100) / (t1 - t0).Seconds(), nil
}
