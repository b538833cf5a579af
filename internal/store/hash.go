package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// metaSHA256 is the user-metadata key, header x-amz-meta-sha256, holding the
// sha256 of the whole object. We compute it ourselves because S3's own
// checksums of multipart uploads are checksums of parts, not of the content.
const metaSHA256 = "sha256"

// SHA256Hex is the lowercase hex sha256 of data.
func SHA256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// FileSHA256 is the lowercase hex sha256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("store: hash %s: %w", path, err)
	}
	defer f.Close()
	return readerSHA256(f, path)
}

func readerSHA256(r io.Reader, name string) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", fmt.Errorf("store: hash %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
