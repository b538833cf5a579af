package store

import (
	"context"
	"sort"

	"github.com/minio/minio-go/v7"
)

// List returns every key under prefix, at any depth, in byte order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range s.c.client.ListObjectsIter(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, s.c.classify("list", s.bucket, prefix, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	// S3 promises this order already; sorting makes it true of any server.
	sort.Strings(keys)
	return keys, nil
}

// Delete removes the object at key; a missing key is not an error, as in S3.
func (s *Store) Delete(ctx context.Context, key string) error {
	err := s.c.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	return s.c.classify("delete", s.bucket, key, err)
}
