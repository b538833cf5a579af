package hub

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// File is one file to push: its path in the repository, its size and
// sha256, and how to read it from an offset. A part, or a retried request,
// re-reads only its own bytes.
type File struct {
	Path   string
	Size   int64
	SHA256 string // hex
	Open   func(ctx context.Context, offset int64) (io.ReadCloser, error)
}

// BytesFile is a file held in memory, such as a re-rendered dataset card.
func BytesFile(path string, data []byte) File {
	sum := sha256.Sum256(data)
	return File{
		Path:   path,
		Size:   int64(len(data)),
		SHA256: hex.EncodeToString(sum[:]),
		Open: func(_ context.Context, off int64) (io.ReadCloser, error) {
			return io.NopCloser(bytes.NewReader(data[off:])), nil
		},
	}
}

// DirFiles lists the files under dir that publish accepts, sorted by
// path, with their size and sha256, and, by path, the files it leaves out,
// which are never read. A path publish accepts must be a regular file.
func DirFiles(dir string, publish func(rel string) bool) (files []File, left []string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !publish(rel) {
			left = append(left, rel)
			return nil
		}
		if !d.Type().IsRegular() {
			return fmt.Errorf("%s is not a regular file: the Hub stores files only", p)
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		n, err := io.Copy(h, f)
		if err != nil {
			return err
		}
		files = append(files, File{
			Path:   rel,
			Size:   n,
			SHA256: hex.EncodeToString(h.Sum(nil)),
			Open:   openAt(p),
		})
		return nil
	})
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, left, err
}

// openAt opens the local file p at an offset.
func openAt(p string) func(context.Context, int64) (io.ReadCloser, error) {
	return func(_ context.Context, off int64) (io.ReadCloser, error) {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		if _, err := f.Seek(off, io.SeekStart); err != nil {
			f.Close()
			return nil, err
		}
		return f, nil
	}
}

// blobSHA1 is git's object id of f's content as a blob, which paths-info
// reports as a regular file's oid.
func blobSHA1(ctx context.Context, f File) (string, error) {
	r, err := f.Open(ctx, 0)
	if err != nil {
		return "", err
	}
	defer r.Close()
	h := sha1.New()
	h.Write([]byte("blob " + strconv.FormatInt(f.Size, 10) + "\x00"))
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
