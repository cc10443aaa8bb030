package cluster

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// need is what a create asks of a node.
type need struct {
	template string // template id (or alias) the sandbox starts from
	memoryMB int64
}

// placer orders the alive nodes for a create. A node's record tells what
// its sandboxes reserved at its last heartbeat; creates this process sent
// since are counted on top (pending) until a later heartbeat includes
// them, so a burst of creates spreads instead of piling onto the node
// that looked emptiest a moment ago.
type placer struct {
	dir *directory
	now func() time.Time

	mu      sync.Mutex
	pending map[string][]*reservation // by node name
}

type reservation struct {
	memoryMB int64
	done     time.Time // zero while the create is in flight
}

func newPlacer(dir *directory, now func() time.Time) *placer {
	return &placer{dir: dir, now: now, pending: map[string][]*reservation{}}
}

// cachedBonus weighs a cached template against free memory: a node that
// has the template is preferred unless another has this many more of the
// create's memory free. A pull is paid once per node, so a new template's
// creates start where it was built and spread once that node fills.
const cachedBonus = 4

// candidates returns the alive nodes in the order a create should try
// them: those with room for it before those without, then by free memory,
// counting a cached template as cachedBonus times the create's memory. A
// node without room is still tried last: its own admission has the final
// word.
func (p *placer) candidates(ctx context.Context, n need) ([]*store.Node, error) {
	alive, err := p.dir.alive(ctx)
	if err != nil {
		return nil, err
	}
	type scored struct {
		node  *store.Node
		room  bool
		score int64
	}
	list := make([]scored, 0, len(alive))
	for _, node := range alive {
		free := node.MemoryMB - node.ReservedMemoryMB - p.pendingMB(node)
		score := free
		if slices.Contains(node.Templates, n.template) {
			score += cachedBonus * n.memoryMB
		}
		list = append(list, scored{node: node, room: free >= n.memoryMB, score: score})
	}
	slices.SortStableFunc(list, func(a, b scored) int {
		return cmp.Or(-cmpBool(a.room, b.room), -cmp.Compare(a.score, b.score))
	})
	out := make([]*store.Node, len(list))
	for i, s := range list {
		out[i] = s.node
	}
	return out, nil
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return 1
	}
	return -1
}

// pendingMB is the memory of the creates sent to node that its record
// does not count yet; it drops those its heartbeat has caught up with.
func (p *placer) pendingMB(node *store.Node) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	var sum int64
	kept := p.pending[node.Name][:0]
	for _, r := range p.pending[node.Name] {
		// A minute covers a node whose clock is behind this one's.
		if !r.done.IsZero() && (node.HeartbeatAt.After(r.done) || p.now().Sub(r.done) > time.Minute) {
			continue
		}
		kept = append(kept, r)
		sum += r.memoryMB
	}
	if len(kept) == 0 {
		delete(p.pending, node.Name)
	} else {
		p.pending[node.Name] = kept
	}
	return sum
}

// reserve counts a create sent to node until its heartbeat does; the
// returned func ends it (ok: the node made the sandbox, which its next
// heartbeat counts; otherwise it is dropped at once).
func (p *placer) reserve(node string, memoryMB int64) func(ok bool) {
	r := &reservation{memoryMB: memoryMB}
	p.mu.Lock()
	p.pending[node] = append(p.pending[node], r)
	p.mu.Unlock()
	return func(ok bool) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if ok {
			r.done = p.now()
			return
		}
		p.pending[node] = slices.DeleteFunc(p.pending[node], func(x *reservation) bool { return x == r })
	}
}
