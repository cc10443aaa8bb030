package storetest

import (
	"context"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

var teamTests = []test{
	{"PutGetList", func(ctx context.Context, t *testing.T, s store.Store) {
		_, err := s.GetTeam(ctx, "acme")
		wantErr(t, "GetTeam never set", err, errdefs.ErrNotFound)
		acme := &store.Team{ID: "acme", MaxSandboxes: 3, MaxMemoryMB: 2048, MaxCPUs: store.Unlimited, MaxBuilds: 1, MaxVolumeMB: 4096}
		must(t, "PutTeam", s.PutTeam(ctx, acme))
		must(t, "PutTeam", s.PutTeam(ctx, &store.Team{ID: "beta", MaxSandboxes: 1}))
		got, err := s.GetTeam(ctx, "acme")
		must(t, "GetTeam", err)
		wantEqual(t, "GetTeam", got, acme)
		acme.MaxSandboxes, acme.MaxVolumeMB = 5, store.Unlimited
		must(t, "PutTeam replace", s.PutTeam(ctx, acme))
		got, err = s.GetTeam(ctx, "acme")
		must(t, "GetTeam after replace", err)
		wantEqual(t, "GetTeam after replace", got, acme)
		list, err := s.ListTeams(ctx)
		must(t, "ListTeams", err)
		if len(list) != 2 || list[0].ID != "acme" || list[1].ID != "beta" {
			t.Fatalf("ListTeams = %+v, want acme then beta", list)
		}
		wantErr(t, "PutTeam no id", s.PutTeam(ctx, &store.Team{}), errdefs.ErrInvalidArgument)
	}},
}
