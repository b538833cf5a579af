// Package e2e tests whole bakes the way they run in production: a real
// Temporal dev server and a real MinIO on loopback, bin/temporal and
// bin/minio from `make tools`, workers and the starter as child processes
// of the built binaries, and every dataset checked against a local bake of
// the same seeds. The tests skip when the server binaries are missing,
// unless E2E_REQUIRED=1. TestProductionTopology runs the production shape
// instead of the dev server: temporal-server on PostgreSQL with mutual TLS,
// MinIO with TLS, workers with metrics.
package e2e
