// Package cputime reads CPU time, of the calling thread and of the process,
// and measures the core clock in it. Benchmarks on a shared machine time
// work in CPU time rather than wall time: neighbours delay a thread but
// hardly change the CPU time its work takes. docs/benchmarks.md says more.
package cputime
