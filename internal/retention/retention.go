// Package retention is the room that retires what the operator keeps for a
// bounded time: sandboxes paused longer than --paused-retention and
// snapshots older than --snapshot-retention. It drives the manager only
// through the Machine interface it declares; the manager knows nothing of
// it (internal/server wires the two).
package retention

import (
	"context"
	"os"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Machine is what retention needs of the sandbox manager.
type Machine interface {
	// PausedBefore lists the sandboxes paused before cutoff.
	PausedBefore(cutoff time.Time) []string
	// KillFor kills a sandbox, recording why (a sandbox.Kill* reason).
	KillFor(ctx context.Context, id, reason string) error
	ListSnapshots(ctx context.Context, sandboxID, name string) ([]*store.Snapshot, error)
	DeleteSnapshot(ctx context.Context, idOrName string) error
}

// Options say what to retire; a zero retention keeps things forever.
type Options struct {
	Paused, Snapshots time.Duration
	// OnNode: this server is a cluster node, whose store is shared with
	// other nodes but whose snapshot directories are its own, so it
	// retires only snapshots whose directory is on this host.
	OnNode bool
}

// Retention retires what is past the operator's retention.
type Retention struct {
	m    Machine
	opts Options
}

// New returns the retention room over m.
func New(m Machine, opts Options) *Retention { return &Retention{m: m, opts: opts} }

// Run retires, every interval until ctx ends, what is past its retention.
func (r *Retention) Run(ctx context.Context, interval time.Duration) {
	if r.opts.Paused <= 0 && r.opts.Snapshots <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r.Retain(ctx, now)
		}
	}
}

// Retain retires what is past its retention at now.
func (r *Retention) Retain(ctx context.Context, now time.Time) {
	if keep := r.opts.Paused; keep > 0 {
		for _, id := range r.m.PausedBefore(now.Add(-keep)) {
			if err := r.m.KillFor(ctx, id, sandbox.KillRetention); err != nil {
				log.G(ctx).Warn("removing a paused sandbox past its retention", "sandbox", id, "err", err)
				continue
			}
			log.G(ctx).Info("paused sandbox removed: past the retention of paused sandboxes", "sandbox", id, "retention", keep)
		}
	}
	if keep := r.opts.Snapshots; keep > 0 {
		snaps, err := r.m.ListSnapshots(ctx, "", "")
		if err != nil {
			log.G(ctx).Warn("listing snapshots for their retention", "err", err)
			return
		}
		for _, s := range snaps {
			if s.CreatedAt.After(now.Add(-keep)) || !r.holds(s) {
				continue
			}
			if err := r.m.DeleteSnapshot(ctx, s.ID); err != nil {
				log.G(ctx).Warn("deleting a snapshot past its retention", "snapshot", s.ID, "err", err)
				continue
			}
			log.G(ctx).Info("snapshot deleted: past the retention of snapshots", "snapshot", s.ID, "retention", keep)
		}
	}
}

// holds says whether s is this server's to retire: in one-machine mode
// every snapshot is; on a node only one whose directory is on this host.
func (r *Retention) holds(s *store.Snapshot) bool {
	if !r.opts.OnNode {
		return true
	}
	_, err := os.Stat(s.Dir)
	return err == nil
}
