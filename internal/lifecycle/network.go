package lifecycle

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/store"
)

// UpdateNetwork replaces a sandbox's egress policy (PUT
// /sandboxes/{id}/network) at once; its ingress policy, set at create,
// stays.
func (m *Manager) UpdateNetwork(ctx context.Context, id string, egress netpolicy.Egress) error {
	if err := m.checkDomains(egress); err != nil {
		return err
	}
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.backend.SetNetwork(ctx, id, egress.Clone()); err != nil {
		return fmt.Errorf("updating network: %w", err)
	}
	e.sb.Network.Egress = egress.Clone()
	if err := m.opts.Store.UpdateSandbox(ctx, e.sb); err != nil {
		return fmt.Errorf("saving network: %w", err)
	}
	m.emit(ctx, e.sb, e.exec, store.EventUpdated, map[string]any{"set_network": e.sb.Network.Egress})
	return nil
}

// checkDomains refuses domain rules on a server without the egress proxy.
func (m *Manager) checkDomains(e netpolicy.Egress) error {
	if len(e.AllowDomains) > 0 && !m.opts.DomainEgress {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("network.allowOut: domain %q: this server runs no egress proxy (see --egress-proxy-port), so it cannot enforce domain rules; use IP addresses or CIDR ranges", e.AllowDomains[0]))
	}
	return nil
}
