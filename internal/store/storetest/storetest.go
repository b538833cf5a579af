// Package storetest is the old home of devtest.StartStore, kept only for
// workflows/bake_test.go, which issue 20's workflow restructuring owns: once
// that test calls devtest.StartStore, this package goes, and with it the one
// arrow from below internal/store up into the dev stack.
package storetest

import (
	"testing"

	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/store"
)

// Start is devtest.StartStore.
func Start(t testing.TB) (store.Config, string) {
	t.Helper()
	return devtest.StartStore(t)
}
