package devstack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// temporalServer is the Temporal CLI's dev server with the Web UI. The
// SQLite file keeps workflow state across a crash or restart of the server.
func (o Options) temporalServer() server {
	db := filepath.Join(o.Dir, "temporal.db")
	args := []string{"server", "start-dev",
		"--ip", host,
		"--port", fmt.Sprint(o.TemporalPort),
		"--ui-port", fmt.Sprint(o.UIPort),
		"--db-filename", db,
		"--namespace", Namespace,
		"--log-level", "warn",
	}
	for _, sa := range SearchAttributes {
		args = append(args, "--search-attribute", sa.Name+"="+sa.Type)
	}
	hostPort := o.TemporalAddr()
	return server{
		args:    args,
		state:   db,
		ports:   o.temporalPorts(),
		addr:    hostPort,
		healthy: func(ctx context.Context) error { return temporalHealthy(ctx, hostPort) },
		prepare: func(ctx context.Context) error { return ensureSearchAttributes(ctx, hostPort) },
	}
}

// quietLogger keeps the SDK client from logging its connection attempts to
// our stdout while we poll a server that is still starting.
var quietLogger = log.NewStructuredLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))

func dialTemporal(ctx context.Context, hostPort string) (client.Client, error) {
	return client.DialContext(ctx, client.Options{
		HostPort:  hostPort,
		Namespace: Namespace,
		Logger:    quietLogger,
	})
}

// temporalHealthy passes once the frontend answers and the namespace exists,
// which is what a worker needs.
func temporalHealthy(ctx context.Context, hostPort string) error {
	c, err := dialTemporal(ctx, hostPort)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.WorkflowService().DescribeNamespace(ctx,
		&workflowservice.DescribeNamespaceRequest{Namespace: Namespace})
	return err
}

// ensureSearchAttributes registers any missing search attribute. The dev
// server applies --search-attribute only when it creates the database, so a
// state directory from before an attribute was added would lack it.
func ensureSearchAttributes(ctx context.Context, hostPort string) error {
	c, err := dialTemporal(ctx, hostPort)
	if err != nil {
		return fmt.Errorf("devstack: temporal on %s: %w", hostPort, err)
	}
	defer c.Close()
	have, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: Namespace})
	if err != nil {
		return fmt.Errorf("devstack: list Temporal search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, sa := range SearchAttributes {
		if _, ok := have.GetCustomAttributes()[sa.Name]; ok {
			continue
		}
		t, err := enumspb.IndexedValueTypeFromString(sa.Type)
		if err != nil {
			return fmt.Errorf("devstack: search attribute %s: %w", sa.Name, err)
		}
		missing[sa.Name] = t
	}
	if len(missing) == 0 {
		return nil
	}
	addition := &operatorservice.AddSearchAttributesRequest{
		Namespace:        Namespace,
		SearchAttributes: missing,
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, addition)
	if err != nil {
		return fmt.Errorf("devstack: add Temporal search attributes: %w", err)
	}
	return nil
}
