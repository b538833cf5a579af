package hub

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Kinds of Hub failure a caller acts on. An *Error matches its kind with
// errors.Is, so `errors.Is(err, hub.ErrUnauthorized)` works through wrapping.
var (
	ErrUnauthorized = errors.New("the Hub rejected the token (401)")
	ErrForbidden    = errors.New("the token may not do this (403)")
	ErrNotFound     = errors.New("not found on the Hub (404)")
	ErrConflict     = errors.New("conflict on the Hub (409)")
	ErrTooLarge     = errors.New("request too large for the Hub (413)")
	ErrRejected     = errors.New("the Hub rejected the request")
	ErrNoToken      = errors.New("no Hub token")
	// ErrOtherDataset is a push that would replace another dataset on the
	// revision without Options.Replace, an *OtherDatasetError.
	ErrOtherDataset = errors.New("the revision holds another dataset")
)

// OtherDatasetError is a push refused because the revision holds another
// dataset, which the commit would replace: its data/ and report/ files
// deleted, its metadata and card overwritten. A mistyped repository or
// branch must not wipe someone's shards from the branch head.
type OtherDatasetError struct {
	Repo, Revision string
	Why            string // what shows that the dataset is another one
	Deleted        int    // files the commit would delete from OwnedFolders
}

func (e *OtherDatasetError) Error() string {
	return fmt.Sprintf("hub: hf://%s@%s holds another dataset (%s); "+
		"pushing would replace it and delete %d of its files in %s: "+
		"check the repository and revision, or replace it on purpose with --replace "+
		"(release.hub.replace in a bake's config)",
		e.Repo, e.Revision, e.Why, e.Deleted, strings.Join(OwnedFolders, " and "))
}

// Is matches ErrOtherDataset.
func (e *OtherDatasetError) Is(target error) bool { return target == ErrOtherDataset }

// Error is a failed Hub call: which operation, the HTTP status, the Hub's
// own message and what to do. It never holds the token: Client redacts
// anything the server echoes.
type Error struct {
	Op      string // "create repo", "commit", …
	Status  int
	Message string // the Hub's error text, if any
	Hint    string // what it means and what to do
	kind    error
}

func (e *Error) Error() string {
	s := fmt.Sprintf("hub: %s: HTTP %d %s", e.Op, e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Hint != "" {
		s += " — " + e.Hint
	}
	return s
}

// Is matches the error's kind.
func (e *Error) Is(target error) bool { return target == e.kind }

// statusError classifies a final HTTP failure, one not retried.
func statusError(op string, status int, message string) *Error {
	e := &Error{
		Op:      op,
		Status:  status,
		Message: message,
		kind:    ErrRejected,
	}
	switch status {
	case http.StatusUnauthorized:
		e.kind = ErrUnauthorized
		e.Hint = "the token is missing, mistyped, expired or revoked: " +
			createWriteToken + " and put it in HF_TOKEN or the token file"
	case http.StatusForbidden:
		e.kind = ErrForbidden
		e.Hint = "the token is valid but lacks write access to this repository " +
			"(a read token, or a fine-grained token without this repo or organization): " +
			"use a write token of an account that may write here"
	case http.StatusNotFound:
		e.kind = ErrNotFound
		e.Hint = "the repository or revision does not exist, or the token cannot see it: " +
			"check the repo id (owner/name) and the revision (an existing branch)"
	case http.StatusConflict, http.StatusPreconditionFailed:
		e.kind = ErrConflict
		e.Hint = "the revision moved while pushing, or the name is taken: " +
			"pushing again re-reads the head"
	case http.StatusRequestEntityTooLarge:
		e.kind = ErrTooLarge
		e.Hint = "the Hub refused the request's size: a commit lists too many files, " +
			"or a file is over the Hub's limit"
	}
	return e
}

// notFoundOrPrivate makes e, a 401, what the Hub means by it when no token
// was sent or the Hub marks it RepoNotFound: the repository does not
// exist, or it is private or gated, and the Hub does not say which.
func notFoundOrPrivate(e *Error) {
	e.kind = ErrNotFound
	e.Hint = "repo not found or private: check the repository id (owner/name); " +
		"a private or gated repository needs a token that may read it (HF_TOKEN or --token-file)"
}

// createWriteToken is the advice for a missing or refused token.
const createWriteToken = "create a write token at https://huggingface.co/settings/tokens"
