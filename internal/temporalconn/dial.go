// Package temporalconn opens the connections to the Temporal frontend that the
// worker and the starter verbs share.
package temporalconn

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"

	"github.com/whestbake/whestbake/internal/settings"
)

// dialTimeout bounds the first contact with Temporal: a wrong address should
// fail in seconds with a message, not hang.
const dialTimeout = 10 * time.Second

// Dial connects to the Temporal frontend of cfg and checks that it answers.
func Dial(ctx context.Context, cfg settings.Temporal, log *slog.Logger) (client.Client, error) {
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, client.Options{
		HostPort:  cfg.Address,
		Namespace: cfg.Namespace,
		Logger:    tlog.NewStructuredLogger(log),
	})
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s (namespace %s): %v; start the dev stack with `whestbake dev up`, or fix temporal.address (env %s)",
			cfg.Address, cfg.Namespace, err, settings.EnvName("temporal.address"))
	}
	return c, nil
}
