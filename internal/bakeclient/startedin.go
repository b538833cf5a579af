package bakeclient

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/whestbake/whestbake/internal/keys"
	"github.com/whestbake/whestbake/internal/seal"
	"github.com/whestbake/whestbake/internal/store"
)

// startedIn is the Temporal cluster and namespace a bake was started in,
// stored in its folder at keys.Bake.StartedIn at its first start. A server
// that does not know a bake proves nothing unless it is the one the bake
// runs on: another address or namespace knows no bake at all.
type startedIn struct {
	Namespace   string    `json:"namespace"`
	NamespaceID string    `json:"namespace_id"`
	ClusterID   string    `json:"cluster_id"`
	ClusterName string    `json:"cluster_name"`
	Seal        seal.Seal `json:"seal"`
}

func (s startedIn) String() string {
	if s.ClusterID == "" {
		return fmt.Sprintf("namespace %s (id %s)", s.Namespace, s.NamespaceID)
	}
	return fmt.Sprintf("namespace %s (id %s) of Temporal cluster %s (id %s)",
		s.Namespace, s.NamespaceID, s.ClusterName, s.ClusterID)
}

// same reports whether s and o name one namespace of one cluster: IDs, which
// a namespace or cluster of the same name elsewhere does not share.
func (s startedIn) same(o startedIn) bool {
	return s.Namespace == o.Namespace &&
		s.NamespaceID == o.NamespaceID &&
		s.ClusterID == o.ClusterID
}

// connectedTo asks the server c is connected to which namespace and cluster
// it is. The namespace's ID, a UUID the server made when the namespace was
// registered, is what tells namespaces apart. The cluster, as the name an
// operator knows, is recorded where the server says it; a hosted service
// may not.
func connectedTo(ctx context.Context, c client.Client, namespace string) (startedIn, error) {
	service := c.WorkflowService()
	req := &workflowservice.DescribeNamespaceRequest{Namespace: namespace}
	ns, err := service.DescribeNamespace(ctx, req)
	if err != nil {
		return startedIn{}, fmt.Errorf("describing Temporal namespace %s: %w", namespace, err)
	}
	here := startedIn{Namespace: namespace, NamespaceID: ns.GetNamespaceInfo().GetId()}
	cluster, err := service.GetClusterInfo(ctx, &workflowservice.GetClusterInfoRequest{})
	if err == nil {
		here.ClusterID = cluster.GetClusterId()
		here.ClusterName = cluster.GetClusterName()
	}
	return here, nil
}

// readStartedIn reads where bake id was started; store.ErrNotFound for a bake
// started before whestbake recorded it.
func readStartedIn(ctx context.Context, st *store.Store, id string) (startedIn, error) {
	key := keys.Bake(id).StartedIn()
	data, err := st.Get(ctx, key)
	if err != nil {
		return startedIn{}, err
	}
	var s startedIn
	where := "s3://" + st.Bucket() + "/" + key
	if err := seal.Unmarshal(where, data, &s, &s.Seal, seal.Seal{Key: key, Bake: id}); err != nil {
		return startedIn{}, err
	}
	return s, nil
}

// recordStartedIn stores, at a bake's first start, the cluster and namespace
// it starts in; every later start must be in the same one, or two servers
// would run one bake's slices into the same objects, and gc would ask the
// wrong one.
func recordStartedIn(ctx context.Context, st *store.Store, c client.Client, namespace, id string,
) error {
	here, err := connectedTo(ctx, c, namespace)
	if err != nil {
		return err
	}
	key := keys.Bake(id).StartedIn()
	rec := here
	data, err := seal.Marshal(&rec, &rec.Seal, seal.Seal{Key: key, Bake: id})
	if err != nil {
		return err
	}
	if err := st.PutCreate(ctx, key, data); !errors.Is(err, store.ErrExists) {
		return err
	}
	was, err := readStartedIn(ctx, st, id)
	if err != nil {
		return fmt.Errorf("bake %s: %w", id, err)
	}
	if !was.same(here) {
		return fmt.Errorf("bake %s was started in %s, and this config connects to %s: "+
			"a bake runs in one namespace; "+
			"point temporal.address and temporal.namespace at the bake's, "+
			"or start this config under a new --id", id, was, here)
	}
	return nil
}
