package lifecycle

import (
	"context"
	"os"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// EnforceRetention removes, every interval until ctx ends, paused
// sandboxes and snapshots older than the operator's retention.
func (m *Manager) EnforceRetention(ctx context.Context, interval time.Duration) {
	if m.opts.PausedRetention <= 0 && m.opts.SnapshotRetention <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			m.retain(ctx, now)
		}
	}
}

// retain removes what is past its retention at now.
func (m *Manager) retain(ctx context.Context, now time.Time) {
	if r := m.opts.PausedRetention; r > 0 {
		for _, id := range m.pausedBefore(now.Add(-r)) {
			if err := m.kill(ctx, id, sandbox.KillRetention); err != nil {
				log.G(ctx).Warn("removing a paused sandbox past its retention", "sandbox", id, "err", err)
				continue
			}
			log.G(ctx).Info("paused sandbox removed: past the retention of paused sandboxes", "sandbox", id, "retention", r)
		}
	}
	if r := m.opts.SnapshotRetention; r > 0 {
		snaps, err := m.ListSnapshots(ctx, "", "")
		if err != nil {
			log.G(ctx).Warn("listing snapshots for their retention", "err", err)
			return
		}
		for _, s := range snaps {
			if s.CreatedAt.After(now.Add(-r)) || !m.holdsSnapshot(s) {
				continue
			}
			if err := m.DeleteSnapshot(ctx, s.ID); err != nil {
				log.G(ctx).Warn("deleting a snapshot past its retention", "snapshot", s.ID, "err", err)
				continue
			}
			log.G(ctx).Info("snapshot deleted: past the retention of snapshots", "snapshot", s.ID, "retention", r)
		}
	}
}

// holdsSnapshot says whether s is this node's to retire: in one-machine
// mode every snapshot is; in a cluster, whose store is shared but whose
// snapshot directories are not, only one whose directory is on this host.
func (m *Manager) holdsSnapshot(s *store.Snapshot) bool {
	if m.opts.NodeName == "" {
		return true
	}
	_, err := os.Stat(s.Dir)
	return err == nil
}

// pausedBefore lists the sandboxes paused before cutoff.
func (m *Manager) pausedBefore(cutoff time.Time) []string {
	m.mu.Lock()
	entries := make([]*entry, 0, len(m.live))
	for _, e := range m.live {
		if !e.running.Load() {
			entries = append(entries, e)
		}
	}
	m.mu.Unlock()
	var out []string
	for _, e := range entries {
		e.mu.Lock()
		if !e.sb.PausedAt.IsZero() && e.sb.PausedAt.Before(cutoff) {
			out = append(out, e.sb.ID)
		}
		e.mu.Unlock()
	}
	return out
}
