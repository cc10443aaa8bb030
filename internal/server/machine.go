package server

import (
	"context"
	"time"

	"github.com/warren-sandbox/warren/internal/history"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/park"
	"github.com/warren-sandbox/warren/internal/pool"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
	"github.com/warren-sandbox/warren/internal/snapshot"
	"github.com/warren-sandbox/warren/internal/store"
)

// machine is the sandbox manager with the rooms that keep state beside it,
// as the API edge, telemetry and usage see it: the lifecycle's calls are
// the manager's, a sandbox's logs are the history room's (which also has a
// killed one's), its metrics and the census's latest samples the metrics
// history's, snapshots and forks the snapshot room's. Retention, the
// sampler and the pools' refills run on their own (startBackground).
type machine struct {
	*lifecycle.Manager
	*snapshot.Room
	logs    *history.EndedLogs
	metrics *history.Metrics
	pools   *pool.Pools // nil without pools
	// park keeps paused sandboxes on shared storage; nil off a node
	// with --shared-dir.
	park *park.Room
}

// withRooms registers the rooms with mgr: before Reconcile, whose kills
// of sandboxes that died meanwhile keep their logs too, and which leaves
// parked sandboxes for the parking room. parking nil parks nothing.
func withRooms(mgr *lifecycle.Manager, cfg *Config, st store.Store, parking *park.Options) *machine {
	logs := history.NewEndedLogs(mgr)
	mgr.OnEnding(logs.Keep)
	snaps := snapshot.New(mgr, snapshot.Options{Store: st, Dir: snapshotDir(cfg)})
	mgr.SetSnapshots(snaps)
	m := &machine{Manager: mgr, Room: snaps, logs: logs,
		metrics: history.NewMetrics(mgr, history.MetricsOptions{Retention: cfg.MetricsRetention}),
		pools: pool.New(mgr, pool.Options{Store: st, Min: cfg.PoolMin, Max: cfg.PoolSize,
			MemoryMB: cfg.PoolMemoryMB, Templates: cfg.PoolTemplates}),
	}
	if m.pools != nil { // a nil *Pools in the interface would be a claimer
		mgr.ClaimFrom(m.pools)
	}
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

// Metrics reads a live or recently killed sandbox's samples.
func (m *machine) Metrics(ctx context.Context, id string, from, to int64) ([]sandbox.Metric, error) {
	return m.metrics.Metrics(ctx, id, from, to)
}

// LatestMetric is a sandbox's newest sample.
func (m *machine) LatestMetric(ctx context.Context, id string) (*sandbox.Metric, bool, error) {
	return m.metrics.LatestMetric(ctx, id)
}

// Census is the manager's census with the running sandboxes' newest
// samples.
func (m *machine) Census() []sandbox.Live { return m.metrics.Census() }

// TakeCPUUsed is the CPU time each team used since the last call.
func (m *machine) TakeCPUUsed() map[string]time.Duration { return m.metrics.TakeCPUUsed() }
