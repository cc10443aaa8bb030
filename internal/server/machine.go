package server

import (
	"context"

	"github.com/warren-sandbox/warren/internal/history"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/park"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
	"github.com/warren-sandbox/warren/internal/snapshot"
	"github.com/warren-sandbox/warren/internal/store"
)

// machine is the sandbox manager with the rooms that keep state beside it,
// as the API edge sees it: the lifecycle's calls are the manager's, a
// sandbox's logs are the history room's (which also has a killed one's),
// snapshots and forks the snapshot room's. Retention runs on its own
// (startBackground).
type machine struct {
	*lifecycle.Manager
	*snapshot.Room
	logs *history.EndedLogs
	// park keeps paused sandboxes on shared storage; nil off a node
	// with --shared-dir.
	park *park.Room
}

// withRooms registers the rooms with mgr: before Reconcile, whose kills
// of sandboxes that died meanwhile keep their logs too, and which leaves
// parked sandboxes for the parking room. parking nil parks nothing.
func withRooms(mgr *lifecycle.Manager, st store.Store, snapshotDir string, parking *park.Options) *machine {
	logs := history.NewEndedLogs(mgr)
	mgr.OnEnding(logs.Keep)
	snaps := snapshot.New(mgr, snapshot.Options{Store: st, Dir: snapshotDir})
	mgr.SetSnapshots(snaps)
	m := &machine{Manager: mgr, Room: snaps, logs: logs}
	if parking != nil {
		m.park = park.New(mgr, *parking)
		mgr.SetParker(m.park)
	}
	return m
}

// takeOverParked is the heartbeat's sweep of parked sandboxes
// (park.Room.TakeOverParked); nothing without parking.
func (m *machine) takeOverParked(ctx context.Context) (int, error) {
	if m.park == nil {
		return 0, nil
	}
	return m.park.TakeOverParked(ctx)
}

// Logs reads a live or recently killed sandbox's log.
func (m *machine) Logs(ctx context.Context, id string, q sandboxlog.Query) ([]sandboxlog.Entry, error) {
	return m.logs.Logs(ctx, id, q)
}
