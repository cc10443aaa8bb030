package server

import (
	"context"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Quotas are the server-wide defaults of every team's limits (the
// --team-max-* flags); 0 is no limit. A team's own settings (warren teams
// set) override each one.
type Quotas struct {
	Sandboxes, MemoryMB, CPUs, Builds int
	VolumeMB                          int // total size limit of the team's volumes
}

// teamQuotas resolves teams' limits from the store over the defaults.
type teamQuotas struct {
	st       store.Store
	defaults Quotas
}

// of is team's effective limits.
func (q teamQuotas) of(ctx context.Context, team string) (Quotas, error) {
	out := q.defaults
	t, err := q.st.GetTeam(ctx, team)
	if errdefs.IsNotFound(err) {
		return out, nil
	}
	if err != nil {
		return out, err
	}
	pick := func(own, def int) int {
		switch {
		case own == store.Unlimited:
			return 0
		case own > 0:
			return own
		}
		return def
	}
	return Quotas{
		Sandboxes: pick(t.MaxSandboxes, out.Sandboxes), MemoryMB: pick(t.MaxMemoryMB, out.MemoryMB),
		CPUs: pick(t.MaxCPUs, out.CPUs), Builds: pick(t.MaxBuilds, out.Builds),
		VolumeMB: pick(t.MaxVolumeMB, out.VolumeMB),
	}, nil
}

// sandboxes is the manager's view of a team's limits.
func (q teamQuotas) sandboxes(ctx context.Context, team string) (sandbox.Quota, error) {
	l, err := q.of(ctx, team)
	return sandbox.Quota{Sandboxes: l.Sandboxes, MemoryMB: l.MemoryMB, CPUs: l.CPUs}, err
}

// builds is the builder's view of a team's limits.
func (q teamQuotas) builds(ctx context.Context, team string) (int, error) {
	l, err := q.of(ctx, team)
	return l.Builds, err
}
