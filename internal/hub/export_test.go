package hub

import "net/http/httptest"

// TrustForTest makes c trust the TLS certificate of srv (an
// httptest.NewTLSServer), as a client of a real Hub trusts its CA.
func TrustForTest(c *Client, srv *httptest.Server) {
	c.http.Transport = srv.Client().Transport
}

// LFSBatches is lfsBatches, how uploadLFS cuts the objects into batches.
var LFSBatches = lfsBatches
