// Package layering holds the test that keeps the import rules of
// docs/ARCHITECTURE.md true; it has no code of its own.
package layering
