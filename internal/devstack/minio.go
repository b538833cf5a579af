package devstack

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"time"

	"github.com/whestbake/whestbake/internal/store"
	"github.com/whestbake/whestbake/internal/tlsconf"
)

// minioServer is MinIO on one local drive. Credentials go through the
// environment, never the command line, where `ps` would show them.
func (o Options) minioServer() server {
	cfg := o.S3Config()
	data := filepath.Join(o.Dir, "minio")
	args := []string{"server", data,
		"--address", addr(o.MinIOPort),
		"--console-address", addr(o.MinIOConsolePort),
	}
	if o.MinIOCertsDir != "" {
		args = append(args, "--certs-dir", o.MinIOCertsDir)
	}
	return server{
		args:    args,
		state:   data,
		env:     []string{"MINIO_ROOT_USER=" + o.AccessKey, "MINIO_ROOT_PASSWORD=" + o.SecretKey},
		ports:   o.minioPorts(),
		addr:    cfg.Endpoint,
		healthy: func(ctx context.Context) error { return minioHealthy(ctx, cfg) },
		prepare: func(ctx context.Context) error {
			for _, b := range o.Buckets {
				if err := store.EnsureBucket(ctx, cfg, b); err != nil {
					return fmt.Errorf("devstack: bucket %q: %w", b, err)
				}
			}
			return nil
		},
	}
}

// minioHealthy is MinIO's unauthenticated liveness probe. The probe answers
// 200 before the object layer is up, flagging that only in a header; waiting
// for the header to clear means the first bucket request will not fail.
func minioHealthy(ctx context.Context, cfg store.Config) error {
	scheme, client := "http", http.DefaultClient
	if cfg.Secure {
		tc, err := tlsconf.Client(
			tlsconf.Files{CA: cfg.CAFile},
			tlsconf.Keys{CA: "MinIO CA file"},
			time.Now(),
		)
		if err != nil {
			return err
		}
		scheme, client = "https", &http.Client{Transport: &http.Transport{TLSClientConfig: tc}}
		defer client.CloseIdleConnections()
	}
	url := scheme + "://" + cfg.Endpoint + "/minio/health/live"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET /minio/health/live: %s", resp.Status)
	}
	if st := resp.Header.Get("X-Minio-Server-Status"); st != "" {
		return fmt.Errorf("GET /minio/health/live: server status %s", st)
	}
	return nil
}
