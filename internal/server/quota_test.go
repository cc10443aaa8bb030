package server

import (
	"context"
	"testing"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestTeamQuotas: a team's own settings override the server's defaults
// field by field; Unlimited lifts a limit, 0 keeps the default.
func TestTeamQuotas(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	ctx := context.Background()
	if err := st.PutTeam(ctx, &store.Team{ID: "acme", MaxSandboxes: 5, MaxMemoryMB: store.Unlimited}); err != nil {
		t.Fatal(err)
	}
	q := teamQuotas{st, Quotas{Sandboxes: 100, MemoryMB: 4096, CPUs: 8, Builds: 4}}
	for team, want := range map[string]Quotas{
		"acme":    {Sandboxes: 5, MemoryMB: 0, CPUs: 8, Builds: 4},
		"nobody":  {Sandboxes: 100, MemoryMB: 4096, CPUs: 8, Builds: 4},
		"default": {Sandboxes: 100, MemoryMB: 4096, CPUs: 8, Builds: 4},
	} {
		got, err := q.of(ctx, team)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", team, got, err, want)
		}
	}
}
