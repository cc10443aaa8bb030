package cluster

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
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
//
// A node is alive until deadAfter has passed since its last heartbeat, as
// dated by this process's clock: the heartbeat's timestamp is the node's
// clock, and a node whose clock is behind would otherwise look dead (and
// have its sandboxes reaped) while it runs. A new heartbeat is dated by
// its own timestamp, but never earlier than the last read that did not
// show it yet (it was written after that read began: a node whose clock
// is behind is dated by that read, at most one read interval early) and
// never later than the read that showed it (one whose clock is ahead is
// dated by that read). So a node in step with this clock is dead exactly
// deadAfter after its last heartbeat, and one out of step at most one
// read interval later. A node first seen with a heartbeat older than
// staleAfter (beyond any plausible skew) is dead at once; any other first
// sight counts as a beat at that read. Time this process could not read
// the store (an outage of Postgres, a restart) does not count against the
// nodes, which were no more able to write their heartbeats: the first
// read after failed ones, more than blindAfter since the last that
// worked, counts as a beat of every node, as a first sight does.
type directory struct {
	st        store.Store
	deadAfter time.Duration
	now       func() time.Time

	mu      sync.Mutex
	nodes   []*store.Node
	readAt  time.Time // of the last list read
	failed  bool      // a read found the store unavailable since
	owners  map[string]owner
	beats   map[string]beat // by node name
	flights sync.Mutex      // one ListNodes at a time
}

// beat is the last heartbeat timestamp seen of a node (its clock), when
// that heartbeat happened by this process's clock (see directory), and
// when the last read that showed it began.
type beat struct{ stamp, seen, checked time.Time }

// staleAfter is the least heartbeat age that makes a node dead on first
// sight, whatever the skew: deadAfter times ten, and at least 5 minutes.
func (d *directory) staleAfter() time.Duration { return max(10*d.deadAfter, 5*time.Minute) }

// owner is what routing needs of a sandbox's record.
type owner struct {
	node, team string
	at         time.Time
}

func newDirectory(st store.Store, deadAfter time.Duration, now func() time.Time) *directory {
	return &directory{st: st, deadAfter: deadAfter, now: now, owners: map[string]owner{}, beats: map[string]beat{}}
}

// all returns every node record, at most nodesTTL old. While one
// caller reads the store, the others get the last list if there is one:
// a slow store must not hold every request up.
func (d *directory) all(ctx context.Context) ([]*store.Node, error) {
	d.mu.Lock()
	cached, fresh := d.nodes, d.nodes != nil && d.now().Sub(d.readAt) < nodesTTL
	d.mu.Unlock()
	if fresh {
		return cached, nil
	}
	if cached != nil && !d.flights.TryLock() {
		return cached, nil
	} else if cached == nil {
		d.flights.Lock()
	}
	defer d.flights.Unlock()
	d.mu.Lock()
	if d.nodes != nil && d.now().Sub(d.readAt) < nodesTTL { // read meanwhile
		defer d.mu.Unlock()
		return d.nodes, nil
	}
	d.mu.Unlock()
	start := d.now()
	nodes, err := d.st.ListNodes(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	if errors.Is(err, errdefs.ErrUnavailable) {
		d.failed = true
		if d.nodes != nil {
			return d.nodes, nil // see isAlive
		}
	}
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	end := d.now()
	blind := d.failed && end.Sub(d.readAt) > d.blindAfter()
	d.nodes, d.readAt, d.failed = nodes, end, false
	d.observe(nodes, start, end, blind)
	return nodes, nil
}

// blindAfter is the longest time reads may fail and still count as
// watching the nodes: the reaper reads every heartbeat interval, which is
// less than deadAfter, so a read or two lost is not an outage.
func (d *directory) blindAfter() time.Duration { return d.deadAfter / 2 }

// observe dates the heartbeats of nodes, read from the store between
// start and end, or, after a time blind, counts every node not stale as
// beating at end; callers hold d.mu.
func (d *directory) observe(nodes []*store.Node, start, end time.Time, blind bool) {
	for _, n := range nodes {
		prev, ok := d.beats[n.Name]
		stamp := n.HeartbeatAt
		switch {
		case ok && blind && end.Sub(stamp) <= d.staleAfter():
			d.beats[n.Name] = beat{stamp: stamp, seen: end, checked: start}
		case ok && !stamp.After(prev.stamp): // no new beat
			prev.checked = start
			d.beats[n.Name] = prev
		case !ok && end.Sub(stamp) > d.staleAfter():
			d.beats[n.Name] = beat{stamp: stamp, seen: stamp, checked: start}
		case !ok: // no earlier read to date it by
			d.beats[n.Name] = beat{stamp: stamp, seen: end, checked: start}
		default:
			seen := stamp
			if seen.Before(prev.checked) {
				seen = prev.checked
			}
			if seen.After(end) {
				seen = end
			}
			d.beats[n.Name] = beat{stamp: stamp, seen: seen, checked: start}
		}
	}
}

// isAlive says whether node n's last heartbeat is less than deadAfter
// old: at the deadline itself it is dead.
//
// While the store cannot be read, nodes are judged as at the last read
// that worked, and that read's list is used: they run what they ran then,
// so sandbox traffic still reaches them, and no node is found dead for a
// silence nobody could have seen.
func (d *directory) isAlive(n *store.Node) bool {
	d.mu.Lock()
	b, ok := d.beats[n.Name]
	now := d.now()
	if d.failed {
		now = d.readAt
	}
	d.mu.Unlock()
	return ok && now.Sub(b.seen) < d.deadAfter
}

// nextDeadline is the earliest moment a node now alive turns dead unless
// it beats again; false when no node is alive.
func (d *directory) nextDeadline() (time.Time, bool) {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	var next time.Time
	for _, b := range d.beats {
		if dl := b.seen.Add(d.deadAfter); dl.After(now) && (next.IsZero() || dl.Before(next)) {
			next = dl
		}
	}
	return next, !next.IsZero()
}

// alive returns the nodes whose heartbeat is recent enough, oldest
// first (the builder is the first).
func (d *directory) alive(ctx context.Context) ([]*store.Node, error) {
	nodes, err := d.all(ctx)
	if err != nil {
		return nil, err
	}
	var out []*store.Node
	for _, n := range nodes {
		if d.isAlive(n) {
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
			return n, d.isAlive(n), nil
		}
	}
	return nil, false, nil
}

// owner returns the node and team of sandbox id; the store's
// ErrNotFound when no sandbox has that id. While the store cannot be
// read, what was known of it, however old, is the answer.
func (d *directory) owner(ctx context.Context, id string) (owner, error) {
	d.mu.Lock()
	o, ok := d.owners[id]
	d.mu.Unlock()
	if ok && d.now().Sub(o.at) < ownerTTL {
		return o, nil
	}
	sb, err := d.st.GetSandbox(ctx, id)
	if ok && errors.Is(err, errdefs.ErrUnavailable) {
		return o, nil // it was there; and a sandbox keeps its node
	}
	if err != nil {
		return owner{}, err
	}
	return d.remember(sb), nil
}

// remember records where sandbox sb runs.
func (d *directory) remember(sb *store.Sandbox) owner {
	o := owner{node: sb.Node, team: sb.TeamID, at: d.now()}
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.owners) >= maxOwnerCache {
		clear(d.owners) // refilled from the store as requests come
	}
	d.owners[sb.ID] = o
	return o
}

// forget drops what is known of sandbox id's node.
func (d *directory) forget(id string) {
	d.mu.Lock()
	delete(d.owners, id)
	d.mu.Unlock()
}
