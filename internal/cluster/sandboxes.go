package cluster

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
	"github.com/warren-sandbox/warren/internal/store"
)

// Sandboxes is what the API role's own REST handlers (apiserver's, as
// Local) see of the sandboxes: the store's records of every node, for
// lists and ownership checks. Whatever acts on one sandbox is forwarded
// to its node before it reaches them, so those methods only say so.
type Sandboxes struct{ Store store.Store }

// List returns every node's sandboxes, newest first.
func (s Sandboxes) List(ctx context.Context) ([]*store.Sandbox, error) {
	all, err := s.Store.ListSandboxes(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	return all, nil
}

// Get returns sandbox id's record.
func (s Sandboxes) Get(ctx context.Context, id string) (*store.Sandbox, error) {
	return s.Store.GetSandbox(ctx, id)
}

// ListSnapshots lists the snapshots of every node.
func (s Sandboxes) ListSnapshots(ctx context.Context, sandboxID, name string) ([]*store.Snapshot, error) {
	all, err := s.Store.ListSnapshots(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing snapshots: %w", err)
	}
	return sandbox.FilterSnapshots(all, sandboxID, name), nil
}

// errNodes: a sandbox's operations are its node's.
var errNodes = errdefs.New(errdefs.ErrUnavailable, "this request is served by the sandbox's node, which the API forwards it to")

// LatestMetric has no samples here: GET /sandboxes/metrics asks the nodes.
func (Sandboxes) LatestMetric(context.Context, string) (*sandbox.Metric, bool, error) {
	return nil, false, nil
}

func (Sandboxes) Create(context.Context, sandbox.CreateRequest) (*store.Sandbox, error) {
	return nil, errNodes
}
func (Sandboxes) Kill(context.Context, string) error { return errNodes }
func (Sandboxes) Connect(context.Context, string, time.Duration, bool) (*store.Sandbox, bool, error) {
	return nil, false, errNodes
}
func (Sandboxes) Pause(context.Context, string, bool) error                     { return errNodes }
func (Sandboxes) SetTimeout(context.Context, string, time.Duration) error       { return errNodes }
func (Sandboxes) Refresh(context.Context, string, time.Duration) error          { return errNodes }
func (Sandboxes) UpdateNetwork(context.Context, string, netpolicy.Egress) error { return errNodes }
func (Sandboxes) Snapshot(context.Context, string, string) (*store.Snapshot, error) {
	return nil, errNodes
}
func (Sandboxes) DeleteSnapshot(context.Context, string) error { return errNodes }
func (Sandboxes) Fork(context.Context, string, int, time.Duration) ([]sandbox.ForkResult, error) {
	return nil, errNodes
}
func (Sandboxes) Metrics(context.Context, string, int64, int64) ([]sandbox.Metric, error) {
	return nil, errNodes
}
func (Sandboxes) Logs(context.Context, string, sandboxlog.Query) ([]sandboxlog.Entry, error) {
	return nil, errNodes
}
