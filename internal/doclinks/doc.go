// Package doclinks has no code, only a test: every relative link of README.md
// and docs/*.md leads to a file of the repository, and every #anchor to a
// heading of the file it names, so moving a section cannot leave a dead link.
package doclinks
