package apiserver

import (
	"context"

	"github.com/warren-sandbox/warren/internal/history"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/snapshot"
	"github.com/warren-sandbox/warren/internal/store"
)

// machine is the manager with the rooms the API reaches beside it, wired
// as internal/server does: the snapshot room (snapshots and forks) and the
// metrics history.
type machine struct {
	*lifecycle.Manager
	*snapshot.Room
	metrics *history.Metrics
}

// newMachine registers a snapshot room keeping snapshots in dir ("": none)
// on mgr and samples its metrics into a history room.
func newMachine(mgr *lifecycle.Manager, st store.Store, dir string) *machine {
	r := snapshot.New(mgr, snapshot.Options{Store: st, Dir: dir})
	mgr.SetSnapshots(r)
	return &machine{Manager: mgr, Room: r, metrics: history.NewMetrics(mgr, history.MetricsOptions{})}
}

func (m *machine) Metrics(ctx context.Context, id string, from, to int64) ([]sandbox.Metric, error) {
	return m.metrics.Metrics(ctx, id, from, to)
}

func (m *machine) LatestMetric(ctx context.Context, id string) (*sandbox.Metric, bool, error) {
	return m.metrics.LatestMetric(ctx, id)
}

func (m *machine) Census() []sandbox.Live { return m.metrics.Census() }
