package e2e

import (
	"context"
	"net/http"
	"path"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/whestbake/whestbake/internal/datasettest"
	"github.com/whestbake/whestbake/internal/devstack/devtest"
	"github.com/whestbake/whestbake/internal/keys"
)

// TestNoUploadOutlivesItsWriter: the multipart uploads that a control
// worker killed mid-merge and a lost CreateMultipartUpload answer left
// open are gone once the bake is done, and gc aborts those a crash left
// that no attempt came back for, under the bake and at its release. They
// used to keep their parts for good: 4 after one run, 32 MiB after another.
func TestNoUploadOutlivesItsWriter(t *testing.T) {
	s := newStack(t)
	control := s.startWorker("control")
	s.startWorker("gpu")
	// About a second per MLP, one slice at a time: the merge beside the
	// split holds its uploads open from the first slice to the last.
	b := bakeSpec{
		ID:          "uploads",
		Width:       32,
		Depth:       3,
		NSamples:    3_000_000,
		SliceSize:   1,
		MaxInFlight: 1,
		Tag:         "uploads",
		Splits:      []splitSpec{{"public", "default", 6, 51}},
	}
	bk := keys.Bake(b.ID)
	cfg := s.bakeConfig(b)

	t.Run("a merge killed mid-upload, then a lost answer", func(t *testing.T) {
		s := s.sub(t)
		s.mustWhestbake("bake", "--config-file", cfg, "--id", b.ID)
		waitFor(t, time.Minute, "the merge's uploads of the shard and the prepared file", func() bool {
			return len(s.uploads(t, artifactBucket, bk.Dataset()+"/")) == 2
		})
		control.kill()
		if s.exists(t, keys.Manifest(bk.Merged("public"))) {
			t.Fatal("the merge finished before the kill: make the bake's MLPs slower")
		}
		// The next control worker's first CreateMultipartUpload is carried
		// out, but its answer is lost: the client asks again.
		proxy := devtest.StartFaultProxy(t, s.opts.S3Config().Endpoint)
		var lost atomic.Bool
		proxy.SetFault(func(r *http.Request) devtest.Fault {
			_, create := r.URL.Query()["uploads"]
			if create && r.Method == http.MethodPost && lost.CompareAndSwap(false, true) {
				return devtest.Fault{LoseAnswer: true}
			}
			return devtest.Fault{}
		})
		via := s.baseConfig()
		section(via, "s3")["endpoint"] = proxy.Addr
		s.spawnWorker(s.writeConfig("control-via-proxy", via), "control", nil).waitReady(t)
		s.watch(cfg, b.ID)
		if !lost.Load() {
			t.Fatal("no CreateMultipartUpload answer was lost: the test proves nothing")
		}
		if left := s.uploads(t, artifactBucket, bk.Prefix()); len(left) > 0 {
			t.Errorf("incomplete uploads left under the bake: %v", left)
		}
		if left := s.uploads(t, releaseBucket, ""); len(left) > 0 {
			t.Errorf("incomplete uploads left in the release bucket: %v", left)
		}
		datasettest.SameDataset(t, s.download(b), s.localBake(b))
	})

	t.Run("gc aborts what crashes left", func(t *testing.T) {
		s := s.sub(t)
		release := keys.Release(releasePrefix, "e2e", b.Tag)
		other := keys.Release(releasePrefix, "e2e", "another-bakes")
		planted := map[string]string{
			artifactBucket: path.Join(bk.Slice("public", 0), "data", "public.parquet"),
			releaseBucket:  path.Join(release, "data", "public-00000-of-00001.parquet"),
		}
		for bucket, key := range planted {
			s.openUpload(t, bucket, key)
		}
		s.openUpload(t, releaseBucket, path.Join(other, "data", "x.parquet"))
		r := s.mustWhestbake("gc", b.ID, "--config-file", s.writeConfig("gc", s.baseConfig()))
		if !strings.Contains(r.stdout, "Aborted 2 incomplete uploads") {
			t.Errorf("gc does not say it aborted the two uploads:\n%s", r)
		}
		for bucket, key := range planted {
			if left := s.uploads(t, bucket, key); len(left) > 0 {
				t.Errorf("gc left the upload of s3://%s/%s", bucket, key)
			}
		}
		if left := s.uploads(t, releaseBucket, other+"/"); len(left) != 1 {
			t.Errorf("gc touched the upload of another release: %v left", left)
		}
	})
}

// uploads lists the keys of the incomplete multipart uploads of bucket
// that begin with prefix (MinIO lists a folder's only with the bucket's).
func (s *stack) uploads(t *testing.T, bucket, prefix string) []string {
	t.Helper()
	var keys []string
	for u := range s.raw(t).ListIncompleteUploads(context.Background(), bucket, "", true) {
		if u.Err != nil {
			t.Fatal(u.Err)
		}
		if strings.HasPrefix(u.Key, prefix) {
			keys = append(keys, u.Key)
		}
	}
	return keys
}

// openUpload opens a multipart upload of key in bucket and leaves it, as a
// worker killed in the middle of it would.
func (s *stack) openUpload(t *testing.T, bucket, key string) {
	t.Helper()
	core := minio.Core{Client: s.raw(t)}
	_, err := core.NewMultipartUpload(context.Background(), bucket, key, minio.PutObjectOptions{})
	if err != nil {
		t.Fatal(err)
	}
}

// raw is a MinIO client of the stack's server that bypasses the store.
func (s *stack) raw(t *testing.T) *minio.Client {
	t.Helper()
	c, err := minio.New(s.opts.S3Config().Endpoint, &minio.Options{
		Creds:  credentials.NewStaticV4(s.opts.AccessKey, s.secret, ""),
		Region: "us-east-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
