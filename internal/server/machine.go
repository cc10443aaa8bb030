package server

import (
	"context"

	"github.com/warren-sandbox/warren/internal/history"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/pool"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
)

// machine is the sandbox manager with the rooms that keep state beside it,
// as the API edge sees it: the lifecycle's calls are the manager's, a
// sandbox's logs are the history room's (which also has a killed one's).
// Retention and the pools' refills run on their own (startBackground).
type machine struct {
	*lifecycle.Manager
	logs  *history.EndedLogs
	pools *pool.Pools // nil without pools
}

// withRooms registers the rooms with mgr: before Reconcile, whose kills
// of sandboxes that died meanwhile keep their logs too.
func withRooms(mgr *lifecycle.Manager, pools pool.Options) *machine {
	logs := history.NewEndedLogs(mgr)
	mgr.OnEnding(logs.Keep)
	m := &machine{Manager: mgr, logs: logs, pools: pool.New(mgr, pools)}
	if m.pools != nil { // a nil *Pools in the interface would be a claimer
		mgr.ClaimFrom(m.pools)
	}
	return m
}

// Logs reads a live or recently killed sandbox's log.
func (m *machine) Logs(ctx context.Context, id string, q sandboxlog.Query) ([]sandboxlog.Entry, error) {
	return m.logs.Logs(ctx, id, q)
}
