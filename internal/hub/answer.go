package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/whestbake/whestbake/internal/readlimit"
)

// What is read of the Hub's answers, a document each: a cap that fits the
// document, and at most one JSON token per readlimit.TokenBytes of that
// cap. The Hub is not trusted to send what it should, and a cap on bytes
// alone lets the document's shape choose what decoding it costs.
const (
	// maxAnswer bounds the small answers: whoami, a preupload of at most
	// batchSize files, a commit, a tag, an error to a creation.
	maxAnswer = 1 << 20
	// maxRevision bounds a revision with its siblings: the Hub's largest
	// repositories, at its documented limit of 100,000 files, list a few MiB.
	maxRevision = 16 << 20
	// maxTreePage bounds a page of a listing: the Hub sends 1,000 entries,
	// a few hundred KiB.
	maxTreePage = 4 << 20
	// maxRefs bounds the branches and tags: thousands of tags are a MiB.
	maxRefs = 4 << 20
	// maxBatchAnswer bounds an LFS batch answer: batchSize objects with
	// their presigned URLs, a multipart one's a URL per part.
	maxBatchAnswer = 16 << 20
)

// decodeAnswer decodes the JSON answer body into out: read up to max bytes,
// its tokens counted by readlimit.JSONTokens, then decoded.
func decodeAnswer(op string, body io.Reader, max int64, out any) error {
	data, err := readCapped(body, max)
	switch {
	case errors.Is(err, errTooLarge):
		return fmt.Errorf("hub: %s: the answer is over %s, the most read of such an answer: "+
			"refused", op, sizeText(max))
	case err != nil:
		return fmt.Errorf("hub: %s: %w", op, err)
	}
	if err := readlimit.JSONTokens(data, max); err != nil {
		return fmt.Errorf("hub: %s: %w: refused", op, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("hub: %s: unreadable answer: %w", op, err)
	}
	return nil
}

// errTooLarge is a body longer than its cap.
var errTooLarge = errors.New("over its cap")

// readCapped reads all of r, refusing more than max bytes after reading
// max + 1.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, errTooLarge
	}
	return data, nil
}

// sizeText is n bytes in MiB or KiB, as the caps are written.
func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d KiB", n>>10)
}
