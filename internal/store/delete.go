package store

import (
	"context"
	"slices"

	"github.com/minio/minio-go/v7"
)

// Tally is a number of objects and their total size.
type Tally struct {
	Objects int
	Bytes   int64
}

// DeletePrefix removes every object under prefix, at any depth, except those
// keep says to keep, and reports what it removed as DeleteWhere does. A nil
// keep keeps none.
func (s *Store) DeletePrefix(
	ctx context.Context,
	prefix string,
	keep func(key string) bool,
) (Tally, error) {
	return s.DeleteWhere(ctx, Deletion{Prefix: prefix, Keep: keep})
}

// Deletion is what DeleteWhere removes, and how.
type Deletion struct {
	// Prefix is the folder to empty. Keys match as strings: end it with
	// "/" to remove one folder, since "slices/1" also matches "slices/10".
	Prefix string
	// Keep says which keys to leave; nil leaves none.
	Keep func(key string) bool
	// Batch, if set, runs each bulk request, remove: it may first check
	// that the deletion may go on, its error stopping it there, and bound
	// the request's context.
	Batch func(ctx context.Context, remove func(context.Context) error) error
}

// deleteBatch is the most keys one bulk request, S3 DeleteObjects, takes.
const deleteBatch = 1000

// DeleteWhere removes what d says, in bulk requests of up to a thousand
// keys, and reports what it removed, also when it stops on an error. Keys
// are deleted as the listing goes, so memory does not grow with the number
// of objects: a split of 100,000 slices has 300,000.
func (s *Store) DeleteWhere(ctx context.Context, d Deletion) (Tally, error) {
	var gone Tally
	batch := make([]minio.ObjectInfo, 0, deleteBatch)
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		remove := func(ctx context.Context) error { return s.removeAll(ctx, batch) }
		var err error
		if d.Batch != nil {
			err = d.Batch(ctx, remove)
		} else {
			err = remove(ctx)
		}
		if err != nil {
			return err
		}
		for _, obj := range batch {
			gone.Objects++
			gone.Bytes += obj.Size
		}
		batch = batch[:0]
		return nil
	}
	for obj := range s.objects(ctx, d.Prefix) {
		if obj.Err != nil {
			return gone, s.conn.classify("list", s.bucket, d.Prefix, obj.Err)
		}
		if d.Keep != nil && d.Keep(obj.Key) {
			continue
		}
		if batch = append(batch, obj); len(batch) == deleteBatch {
			if err := flush(); err != nil {
				return gone, err
			}
		}
	}
	return gone, flush()
}

// removeAll deletes objs in one bulk request.
func (s *Store) removeAll(ctx context.Context, objs []minio.ObjectInfo) error {
	results, err := s.conn.client.RemoveObjectsWithIter(
		ctx,
		s.bucket,
		slices.Values(objs),
		minio.RemoveObjectsOptions{},
	)
	if err != nil {
		return s.conn.classify("delete", s.bucket, "", err)
	}
	for r := range results {
		if r.Err != nil {
			return s.conn.classify("delete", s.bucket, r.ObjectName, r.Err)
		}
	}
	return ctx.Err()
}

// Usage is the number and total size of the objects under prefix.
func (s *Store) Usage(ctx context.Context, prefix string) (Tally, error) {
	var u Tally
	for obj := range s.objects(ctx, prefix) {
		if obj.Err != nil {
			return u, s.conn.classify("list", s.bucket, prefix, obj.Err)
		}
		u.Objects++
		u.Bytes += obj.Size
	}
	return u, nil
}
