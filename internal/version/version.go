// Package version holds whestbake's release number, which metadata, the
// CLI's --version, the worker's metrics and the image record.
package version

// Version is whestbake's version as recorded in metadata, bumped by hand with
// each release. Builds are not stamped: two workers built from one release
// must record the same version.
const Version = "0.2.0"
