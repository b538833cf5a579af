package store

import (
	"context"

	"github.com/minio/minio-go/v7"
)

// Tally is a number of objects and their total size.
type Tally struct {
	Objects int
	Bytes   int64
}

// DeletePrefix removes every object under prefix, at any depth, except those
// keep says to keep (nil keeps none), in bulk requests of up to a thousand
// keys, and reports what it removed. Keys are deleted as the listing goes,
// so memory does not grow with the number of objects (a split of 100,000
// slices has 300,000). Keys match as strings: end prefix with "/" to remove
// one folder, since "slices/1" also matches "slices/10".
func (s *Store) DeletePrefix(ctx context.Context, prefix string, keep func(key string) bool) (Tally, error) {
	var d Tally
	var listErr error
	doomed := func(yield func(minio.ObjectInfo) bool) {
		for obj := range s.c.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
			if obj.Err != nil {
				listErr = s.c.classify("list", s.bucket, prefix, obj.Err)
				return
			}
			if keep != nil && keep(obj.Key) {
				continue
			}
			d.Objects++
			d.Bytes += obj.Size
			if !yield(obj) {
				return
			}
		}
	}
	results, err := s.c.client.RemoveObjectsWithIter(ctx, s.bucket, doomed, minio.RemoveObjectsOptions{})
	if err != nil {
		return Tally{}, s.c.classify("delete", s.bucket, prefix, err)
	}
	for r := range results {
		if r.Err != nil {
			return Tally{}, s.c.classify("delete", s.bucket, r.ObjectName, r.Err)
		}
	}
	if listErr != nil {
		return Tally{}, listErr
	}
	return d, nil
}

// Usage is the number and total size of the objects under prefix.
func (s *Store) Usage(ctx context.Context, prefix string) (Tally, error) {
	var u Tally
	for obj := range s.c.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return u, s.c.classify("list", s.bucket, prefix, obj.Err)
		}
		u.Objects++
		u.Bytes += obj.Size
	}
	return u, nil
}
