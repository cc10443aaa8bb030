package cluster

import (
	"context"
	"fmt"
	"slices"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Sandboxes is what the API role's own REST handlers (apiserver's
// Records) read of the sandboxes: the store's records of every node, for
// lists and lookups. Whatever acts on a sandbox is relayed to its node
// (API's apiserver.Relay methods) and never reaches apiserver's handlers.
type Sandboxes struct{ Store store.Store }

// List returns every node's sandboxes, newest first, without those
// being killed: a node drops them from its own list when the kill begins,
// and deletes their record once their processes are gone.
func (s Sandboxes) List(ctx context.Context) ([]*store.Sandbox, error) {
	all, err := s.Store.ListSandboxes(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing sandboxes: %w", err)
	}
	return slices.DeleteFunc(all, func(sb *store.Sandbox) bool { return sb.Intent == store.IntentKilling }), nil
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
