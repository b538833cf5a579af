package store

import (
	"context"
	"net"
	"time"
)

// SetTestDial routes every connection of stores opened afterwards to dial,
// whatever host the request names (nil restores the default).
func SetTestDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) {
	testDial = dial
}

// SetUploadPartBytes makes Upload's first parts n bytes until the test ends.
func SetUploadPartBytes(t interface{ Cleanup(func()) }, n int64) {
	old := uploadPartBytes
	uploadPartBytes = n
	t.Cleanup(func() { uploadPartBytes = old })
}

// SetStartupWait bounds Open's wait for a starting server to d until the
// test ends.
func SetStartupWait(t interface{ Cleanup(func()) }, d time.Duration) {
	old := startupWait
	startupWait = d
	t.Cleanup(func() { startupWait = old })
}
