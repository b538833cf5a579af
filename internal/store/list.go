package store

import (
	"context"
	"iter"
	"sort"

	"github.com/minio/minio-go/v7"
)

// objects lists every object under prefix, at any depth.
func (s *Store) objects(ctx context.Context, prefix string) iter.Seq[minio.ObjectInfo] {
	opts := minio.ListObjectsOptions{Prefix: prefix, Recursive: true}
	return s.conn.client.ListObjectsIter(ctx, s.bucket, opts)
}

// List returns every key under prefix, at any depth, in byte order.
func (s *Store) List(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range s.objects(ctx, prefix) {
		if obj.Err != nil {
			return nil, s.conn.classify("list", s.bucket, prefix, obj.Err)
		}
		keys = append(keys, obj.Key)
	}
	// S3 promises this order already; sorting makes it true of any server.
	sort.Strings(keys)
	return keys, nil
}

// Delete removes the object at key; a missing key is not an error, as in S3.
func (s *Store) Delete(ctx context.Context, key string) error {
	err := s.conn.client.RemoveObject(ctx, s.bucket, key, minio.RemoveObjectOptions{})
	return s.conn.classify("delete", s.bucket, key, err)
}
