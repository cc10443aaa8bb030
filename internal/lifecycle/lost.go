package lifecycle

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// DropLost destroys the live sandboxes whose records left the store
// behind this node's back: in a cluster, the API role reports a silent
// node's sandboxes killed (node-lost) and deletes their records, so a node
// that was only cut off must not keep running what the cluster has
// already given up. It returns how many it destroyed.
func (m *Manager) DropLost(ctx context.Context) (int, error) {
	records, err := m.opts.Store.ListSandboxesOnNode(ctx, m.opts.NodeName)
	if err != nil {
		return 0, fmt.Errorf("listing this node's sandboxes: %w", err)
	}
	stored := make(map[string]bool, len(records))
	for _, r := range records {
		stored[r.ID] = true
	}
	m.mu.Lock()
	var missing []*entry
	for id, e := range m.live {
		if !stored[id] {
			missing = append(missing, e)
		}
	}
	m.mu.Unlock()
	dropped := 0
	for _, e := range missing {
		ok, err := m.dropIfLost(ctx, e)
		if err != nil {
			return dropped, err
		}
		if ok {
			dropped++
		}
	}
	return dropped, nil
}

// dropIfLost destroys e if its record is still missing: the list above may
// predate a create that recorded it just after.
func (m *Manager) dropIfLost(ctx context.Context, e *entry) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.killed {
		return false, nil
	}
	cur, err := m.opts.Store.GetSandbox(ctx, e.sb.ID)
	if err == nil && cur.Node != m.opts.NodeName {
		// Parked, and handed to another node meanwhile: only this
		// node's copy goes (killLocked sees the record is not its own).
		log.G(ctx).Warn("destroying this node's copy of a sandbox the cluster handed to another node while this one was silent", "sandbox", e.sb.ID, "node", cur.Node)
		return true, m.killLocked(ctx, e, sandbox.KillNodeLost)
	}
	if !errdefs.IsNotFound(err) {
		return false, err // still recorded (nil), or the store failed
	}
	log.G(ctx).Warn("destroying a sandbox the cluster reported lost while this node was silent", "sandbox", e.sb.ID)
	return true, m.killLocked(ctx, e, sandbox.KillNodeLost)
}
