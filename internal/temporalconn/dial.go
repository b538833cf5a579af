// Package temporalconn opens the connections to the Temporal frontend that the
// worker and the starter verbs share: plain text to the dev server, TLS or
// mutual TLS to a self-hosted cluster, API keys or mTLS to Temporal Cloud.
// A connection that fails is diagnosed by diagnose, so that the error
// names the config key to change instead of quoting gRPC.
package temporalconn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	tlog "go.temporal.io/sdk/log"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/whestbake/whestbake/internal/tlsconf"
)

// dialTimeout bounds the first contact with Temporal: a wrong address should
// fail in seconds with a message, not hang.
const dialTimeout = 10 * time.Second

// Option adjusts the client options before dialing; the worker adds its
// metrics handler.
type Option func(*client.Options)

// Dial connects to the Temporal frontend of cfg and checks that it answers
// and that the namespace exists and accepts these credentials.
func Dial(
	ctx context.Context,
	cfg Config,
	log *slog.Logger,
	opts ...Option,
) (client.Client, error) {
	tlsCfg, err := cfg.ClientTLS()
	if err != nil {
		return nil, fmt.Errorf("invalid configuration: %w", err)
	}
	o := client.Options{
		HostPort:          cfg.Address,
		Namespace:         cfg.Namespace,
		Logger:            tlog.NewStructuredLogger(log),
		ConnectionOptions: client.ConnectionOptions{TLS: tlsCfg},
	}
	if key := cfg.APIKey; key != "" {
		// "authorization: Bearer <key>" on every call, as Temporal Cloud
		// expects; the SDK also sends the namespace header it routes by.
		o.Credentials = client.NewAPIKeyStaticCredentials(key)
	}
	for _, opt := range opts {
		opt(&o)
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, o)
	if err != nil {
		return nil, diagnose(dctx, cfg, tlsCfg, err)
	}
	if err := checkNamespace(dctx, c, cfg); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// checkNamespace asks for the namespace: the first call that the server
// authorizes per namespace, so a wrong namespace or a key without access to
// it fails here, once, with a message, instead of in every poll.
func checkNamespace(ctx context.Context, c client.Client, cfg Config) error {
	_, err := c.WorkflowService().DescribeNamespace(
		ctx,
		&workflowservice.DescribeNamespaceRequest{Namespace: cfg.Namespace},
	)
	if err == nil {
		return nil
	}
	var nf *serviceerror.NamespaceNotFound
	if errors.As(err, &nf) || status.Code(err) == codes.NotFound {
		fix := fmt.Sprintf(
			"fix temporal.namespace (env %s; "+
				"Temporal Cloud namespaces are <name>.<account-id>), "+
				"or create it (`temporal operator namespace create --namespace %s`)",
			cfg.EnvName("temporal.namespace"),
			cfg.Namespace,
		)
		return fmt.Errorf(
			"the Temporal server at %s has no namespace %q: %s",
			cfg.Address,
			cfg.Namespace,
			fix,
		)
	}
	if msg := authProblem(err, cfg); msg != "" {
		return errors.New(msg)
	}
	return fmt.Errorf(
		"the Temporal server at %s: describing namespace %q: %s",
		cfg.Address,
		cfg.Namespace,
		scrub(err.Error(), cfg),
	)
}

// diagnose explains a failed dial. gRPC flattens the cause into a string
// and the x509 error types are gone, so the cause is found again by probing:
// a TCP connect tells a wrong address; a TLS handshake with the same
// settings tells an untrusted CA, a wrong server name or a rejected client
// certificate; a TLS probe of a plain-text client tells a TLS port.
func diagnose(ctx context.Context, cfg Config, tlsCfg *tls.Config, dialErr error) error {
	where := fmt.Sprintf(
		"cannot connect to Temporal at %s (namespace %s)",
		cfg.Address,
		cfg.Namespace,
	)
	addrFix := fmt.Sprintf(
		"start the dev stack with `whestbake dev up`, or fix temporal.address (env %s)",
		cfg.EnvName("temporal.address"),
	)
	// A fresh context: dialErr may be the dial's deadline, and the probes
	// have their own short timeouts.
	pctx := context.WithoutCancel(ctx)
	conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(pctx, "tcp", cfg.Address)
	if err != nil {
		return fmt.Errorf("%s: %v: %s", where, err, addrFix)
	}
	conn.Close()
	if tlsCfg == nil {
		if tlsconf.SpeaksTLS(pctx, cfg.Address) {
			return fmt.Errorf(
				"%s: the server speaks TLS and this client plain text: "+
					"set temporal.tls.enabled: true (env %s=true), "+
					"and temporal.tls.ca-file if its certificate is from a private CA",
				where,
				cfg.EnvName("temporal.tls.enabled"),
			)
		}
	} else if herr := tlsconf.Handshake(pctx, cfg.Address, tlsCfg); herr != nil {
		if msg := tlsconf.Explain(herr, TLSKeys, len(tlsCfg.Certificates) > 0); msg != "" {
			return fmt.Errorf("%s: %s", where, msg)
		}
	}
	if msg := authProblem(dialErr, cfg); msg != "" {
		return errors.New(msg)
	}
	return fmt.Errorf("%s: %s: %s", where, scrub(dialErr.Error(), cfg), addrFix)
}

// authProblem explains a rejection of the credentials, or returns "".
func authProblem(err error, cfg Config) string {
	code := status.Code(err) // finds a gRPC status wrapped anywhere in err
	var denied *serviceerror.PermissionDenied
	switch {
	case code == codes.Unauthenticated:
		if cfg.APIKey != "" {
			return fmt.Sprintf(
				"Temporal at %s rejected temporal.api-key (%s): "+
					"set %s to a current key (Temporal Cloud: Settings → API keys)",
				cfg.Address,
				scrub(err.Error(), cfg),
				cfg.EnvName("temporal.api-key"),
			)
		}
		return fmt.Sprintf(
			"Temporal at %s wants credentials (%s): set temporal.api-key (env %s) "+
				"or a client certificate (temporal.tls.cert-file, temporal.tls.key-file)",
			cfg.Address,
			scrub(err.Error(), cfg),
			cfg.EnvName("temporal.api-key"),
		)
	case errors.As(err, &denied) || code == codes.PermissionDenied:
		who := "these credentials"
		switch {
		case cfg.APIKey != "":
			who = "temporal.api-key"
		case cfg.TLS.CertFile != "":
			who = "the client certificate in temporal.tls.cert-file"
		}
		return fmt.Sprintf(
			"Temporal at %s does not let %s use namespace %q (%s): "+
				"grant access to the namespace, or fix temporal.namespace",
			cfg.Address,
			who,
			cfg.Namespace,
			scrub(err.Error(), cfg),
		)
	}
	return ""
}

// scrub keeps the API key out of a message that quotes a library's error.
func scrub(msg string, cfg Config) string {
	if key := cfg.APIKey; key != "" {
		msg = strings.ReplaceAll(msg, key, "[redacted]")
	}
	return msg
}
