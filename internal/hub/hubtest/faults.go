package hubtest

import "time"

// Routes, for the fault hooks and Count: whoami, create, info, revision,
// tree, paths-info, preupload, batch, basic, part, complete, verify,
// commit, refs, tag, resolve, raw, lfs-file.

// Fail answers the next len(statuses) requests to route with those
// statuses.
func (s *Server) Fail(route string, statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[route] = append(s.faults[route], statuses...)
}

// RateLimit closes route for d, as the Hub's rate limit does: until then
// its requests answer 429 with the seconds left in the RateLimit header's
// t= and no Retry-After.
func (s *Server) RateLimit(route string, d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limits[route] = time.Now().Add(d)
}

// RateLimited is how many requests to route answered 429 by RateLimit: a
// client that waits what it is told sends one.
func (s *Server) RateLimited(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.limited[route]
}

// StallPart makes the next PUT of multipart part n hang until its client
// goes away, as a killed pusher does; the returned channel closes when it
// arrives.
func (s *Server) StallPart(n int) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan struct{})
	s.stalls[n] = ch
	return ch
}

// Hang makes every request to route stop after `after` bytes of its body
// or of its answer and hold the connection until the client goes away: on
// an upload the server stops reading, on a GET it stops sending. A
// negative after lifts it.
func (s *Server) Hang(route string, after int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if after < 0 {
		delete(s.hangs, route)
		return
	}
	s.hangs[route] = after
}

// Throttle moves the bodies of route's uploads and the answers to its GETs
// at rate bytes a second, in small steps: slow, but never still; 0 lifts
// it.
func (s *Server) Throttle(route string, rate int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttles[route] = rate
}

// BeforeNextCommit runs f once, before the next commit is applied, to move
// the branch under a pusher.
func (s *Server) BeforeNextCommit(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onCommit = f
}

// CutNext makes answers of route, "resolve" or "lfs-file", stop after
// after[0], after[1], … body bytes, the connection closed as in a download
// cut mid-file: each cut applies to the next answer longer than it.
func (s *Server) CutNext(route string, after ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cuts[route] = append(s.cuts[route], after...)
}

// CorruptLFS replaces the stored content of LFS object oid, as a storage
// that serves other bytes than the Hub recorded would.
func (s *Server) CorruptLFS(id, oid string, data []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repos[id].lfs[oid] = data
}
