// Package bakeclient is the starter's side of a bake on Temporal: it starts a
// bake, its inputs stored in S3 under the bake's lock, reads its status,
// follows it, cancels it, lists bakes and removes what a bake left in S3.
// Each call returns a plain struct, which the command line in internal/cli
// prints as text or as JSON; nothing here prints or knows a flag.
//
// The shape is reference-app-orders-go's: its app/order package holds the
// Temporal calls and the types they return, and the commands over it stay
// thin.
package bakeclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/internal/preflight"
	"github.com/whestbake/whestbake/internal/settings"
	"github.com/whestbake/whestbake/internal/temporalconn"
)

// Client reaches the Temporal namespace and the S3 bucket of one config.
// It connects to Temporal on the first call that needs it, so that a verb
// that checks S3 first, such as bake or gc, reports an unreachable store
// before it tries the Temporal server.
type Client struct {
	cfg settings.Config
	// log receives the Temporal SDK's warnings and a lock that could not
	// be released, which ends by itself.
	log      io.Writer
	temporal client.Client
}

// New is a client of cfg's servers; log takes its warnings.
func New(cfg settings.Config, log io.Writer) *Client {
	return &Client{cfg: cfg, log: log}
}

// Close closes the Temporal connection, if one was made.
func (c *Client) Close() {
	if c.temporal != nil {
		c.temporal.Close()
	}
}

// connect dials Temporal once, logging only the SDK's warnings.
func (c *Client) connect(ctx context.Context) (client.Client, error) {
	if c.temporal != nil {
		return c.temporal, nil
	}
	if err := preflight.Temporal(c.cfg); err != nil {
		return nil, err
	}
	log := slog.New(slog.NewTextHandler(c.log, &slog.HandlerOptions{Level: slog.LevelWarn}))
	tc, err := temporalconn.Dial(ctx, c.cfg.Temporal.Conn(), log)
	if err != nil {
		return nil, err
	}
	c.temporal = tc
	return tc, nil
}

// noSuchBake turns Temporal's NotFound into a message that names the bake
// and the server and namespace asked: a bake is often "missing" because
// the config points at another server.
func noSuchBake(t settings.Temporal, id string, err error) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("no bake %q on the Temporal server at %s, namespace %s: "+
			"check the id with `whestbake list`, "+
			"or where temporal.address and temporal.namespace point",
			id, t.Address, t.Namespace)
	}
	return err
}

// FormatDuration prints durations the way whestbench's CLI does.
func FormatDuration(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 1:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case s < 60:
		return fmt.Sprintf("%.1fs", s)
	case s < 3600:
		return fmt.Sprintf("%dm %ds", int(s)/60, int(s)%60)
	}
	return fmt.Sprintf("%dh %dm %ds", int(s)/3600, int(s)%3600/60, int(s)%60)
}

// sleep waits d, or until ctx ends.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
