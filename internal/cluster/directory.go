package cluster

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// Freshness of what the directory keeps: node records change every
// heartbeat and are read on every create, so a fraction of a second saves
// most queries; a sandbox never changes node, so its owner is kept longer
// (a gone sandbox is then answered by its node, or found gone when its
// node is).
const (
	nodesTTL      = 250 * time.Millisecond
	ownerTTL      = 30 * time.Second
	maxOwnerCache = 1 << 16
)

// directory reads the cluster's nodes and which node runs a sandbox from
// the store, keeping each for a short while.
type directory struct {
	st        store.Store
	deadAfter time.Duration
	now       func() time.Time

	mu      sync.Mutex
	nodes   []*store.Node
	readAt  time.Time
	owners  map[string]owner
	flights sync.Mutex // one ListNodes at a time
}

type owner struct {
	node string
	at   time.Time
}

func newDirectory(st store.Store, deadAfter time.Duration, now func() time.Time) *directory {
	return &directory{st: st, deadAfter: deadAfter, now: now, owners: map[string]owner{}}
}

// all returns every node record, at most nodesTTL old.
func (d *directory) all(ctx context.Context) ([]*store.Node, error) {
	d.flights.Lock()
	defer d.flights.Unlock()
	d.mu.Lock()
	if d.nodes != nil && d.now().Sub(d.readAt) < nodesTTL {
		defer d.mu.Unlock()
		return d.nodes, nil
	}
	d.mu.Unlock()
	nodes, err := d.st.ListNodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	d.mu.Lock()
	d.nodes, d.readAt = nodes, d.now()
	d.mu.Unlock()
	return nodes, nil
}

// alive returns the nodes whose heartbeat is recent enough, oldest
// first (the builder is the first).
func (d *directory) alive(ctx context.Context) ([]*store.Node, error) {
	nodes, err := d.all(ctx)
	if err != nil {
		return nil, err
	}
	now := d.now()
	var out []*store.Node
	for _, n := range nodes {
		if n.Alive(now, d.deadAfter) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *store.Node) int {
		return cmp.Or(a.StartedAt.Compare(b.StartedAt), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// node returns the named node's record and whether it is alive; nil when
// the store has none.
func (d *directory) node(ctx context.Context, name string) (*store.Node, bool, error) {
	nodes, err := d.all(ctx)
	if err != nil {
		return nil, false, err
	}
	for _, n := range nodes {
		if n.Name == name {
			return n, n.Alive(d.now(), d.deadAfter), nil
		}
	}
	return nil, false, nil
}

// owner returns the node that runs sandbox id; store.ErrNotFound (from
// the store) when no sandbox has that id.
func (d *directory) owner(ctx context.Context, id string) (string, error) {
	d.mu.Lock()
	o, ok := d.owners[id]
	d.mu.Unlock()
	if ok && d.now().Sub(o.at) < ownerTTL {
		return o.node, nil
	}
	sb, err := d.st.GetSandbox(ctx, id)
	if err != nil {
		return "", err
	}
	d.remember(id, sb.Node)
	return sb.Node, nil
}

// remember records that node runs sandbox id.
func (d *directory) remember(id, node string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.owners) >= maxOwnerCache {
		clear(d.owners) // refilled from the store as requests come
	}
	d.owners[id] = owner{node: node, at: d.now()}
}

// forget drops what is known of sandbox id's node.
func (d *directory) forget(id string) {
	d.mu.Lock()
	delete(d.owners, id)
	d.mu.Unlock()
}
