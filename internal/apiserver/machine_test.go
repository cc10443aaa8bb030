package apiserver

import (
	"context"

	"github.com/warren-sandbox/warren/internal/history"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// machine is the manager with its metrics history room, as internal/server
// wires the two for the API.
type machine struct {
	*lifecycle.Manager
	metrics *history.Metrics
}

func withMetrics(mgr *lifecycle.Manager) *machine {
	return &machine{Manager: mgr, metrics: history.NewMetrics(mgr, history.MetricsOptions{})}
}

func (m *machine) Metrics(ctx context.Context, id string, from, to int64) ([]sandbox.Metric, error) {
	return m.metrics.Metrics(ctx, id, from, to)
}

func (m *machine) LatestMetric(ctx context.Context, id string) (*sandbox.Metric, bool, error) {
	return m.metrics.LatestMetric(ctx, id)
}

func (m *machine) Census() []sandbox.Live { return m.metrics.Census() }
