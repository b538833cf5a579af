// Package bakeapi is the contract between whestbake's Temporal workflows, its
// activities and its clients: what a bake is, as Spec, the one description of
// the MLPs' shape and sampling, with its one validator; the workflow and
// activity Input/Output types, task queue, workflow and activity names,
// workflow IDs, progress types and the error types a failed bake reports.
//
// It imports nothing but the standard library, so workflow code that builds on
// it links no engine, storage or parquet code, which a test in workflows/
// checks, and a client that only starts or watches bakes stays small.
//
// The field names of these types are part of recorded workflow histories:
// renaming one breaks the replay of running bakes, so a Go rename keeps the old
// name as its JSON tag.
package bakeapi
