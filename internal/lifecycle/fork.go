package lifecycle

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/crashpoint"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// Fork snapshots a sandbox once (it carries on, or stays paused) and starts
// count independent sandboxes from that snapshot, each living timeout. The
// snapshot is not listed; its memory image goes when the forks are up and
// its disk layer when the last sandbox standing on it ends. An error means
// no fork was attempted; each fork's own failure is in its result.
func (m *Manager) Fork(ctx context.Context, id string, count int, timeout time.Duration) ([]sandbox.ForkResult, error) {
	if count < 1 || count > sandbox.MaxForks {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("count must be between 1 and %d", sandbox.MaxForks))
	}
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return nil, err
	}
	m.snapMu.RLock()
	defer m.snapMu.RUnlock()
	defer m.collectLater()
	e.mu.Lock()
	src := copySandbox(e.sb)
	snap, err := m.snapshotLocked(ctx, e)
	e.mu.Unlock()
	if err != nil {
		return nil, err
	}
	crashpoint.Hit("fork.snapshot")
	tpl, err := m.opts.Store.GetTemplate(ctx, snap.TemplateID)
	if err != nil {
		return nil, fmt.Errorf("template of sandbox %s: %w", id, err)
	}
	req := sandbox.CreateRequest{
		TemplateID:        src.TemplateID,
		Timeout:           timeout,
		Metadata:          src.Metadata,
		Secure:            src.EnvdAccessToken != "",
		AutoPause:         src.AutoPause,
		AutoPauseNoMemory: src.AutoPauseNoMemory,
		AutoResume:        src.AutoResume,
		Network:           src.Network.Clone(),
		APIKeyID:          src.APIKeyID,
		TeamID:            src.TeamID,
		AnyTeam:           true, // the source's own snapshot
	}
	out := make([]sandbox.ForkResult, count)
	for i := range out {
		sb, err := m.create(ctx, req, tpl, snap)
		if sb != nil {
			sb.Alias = src.Alias
		}
		out[i] = sandbox.ForkResult{Sandbox: sb, Err: err}
	}
	return out, nil
}
