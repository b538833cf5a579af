// Package storetest gives tests a real MinIO with an empty bucket.
package storetest

import (
	"testing"

	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// Bucket is the bucket Start creates.
const Bucket = "test"

// Start runs a MinIO private to t (stopped when the test ends) and returns
// how to reach it and the name of an existing, empty bucket.
func Start(t testing.TB) (store.Config, string) {
	t.Helper()
	o := devtest.Options(t)
	o.Buckets = []string{Bucket}
	o = devtest.StartMinIO(t, o)
	return o.S3Config(), Bucket
}
