package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// Races on rules that span records, which a store with several writers
// (Postgres behind a cluster) must hold with locks rather than by
// serializing everything as SQLite's single writer does.
var raceTests = []test{
	{"TemplateNames", testTemplateNameRace},
	{"SnapshotNames", testSnapshotNameRace},
	{"RevokeByName", testRevokeRace},
}

// testTemplateNameRace has writer w claim id n<w> with alias n<w+1>, all at
// once: each check of "is this name taken" races another writer's claim.
// Whatever wins, no alias may end up being another template's id.
func testTemplateNameRace(ctx context.Context, t *testing.T, s store.Store) {
	raceClaims(t, func(w int) error {
		return s.PutTemplate(ctx, newTemplate(fmt.Sprintf("n%d", w), w, fmt.Sprintf("n%d", (w+1)%writers)))
	})
	tpls, err := s.ListTemplates(ctx)
	must(t, "ListTemplates", err)
	owner := map[string]string{}
	for _, tpl := range tpls {
		owner[tpl.ID] = tpl.ID
	}
	for _, tpl := range tpls {
		for _, a := range tpl.Aliases {
			if o, ok := owner[a]; ok {
				t.Errorf("alias %q of template %s is also the id or alias of %s", a, tpl.ID, o)
			}
			owner[a] = tpl.ID
		}
	}
}

// testSnapshotNameRace is testTemplateNameRace for snapshot ids and names.
func testSnapshotNameRace(ctx context.Context, t *testing.T, s store.Store) {
	raceClaims(t, func(w int) error {
		return s.CreateSnapshot(ctx, newSnapshot(fmt.Sprintf("s%d", w), time.Now(), fmt.Sprintf("s%d", (w+1)%writers)))
	})
	snaps, err := s.ListSnapshots(ctx)
	must(t, "ListSnapshots", err)
	ids := map[string]bool{}
	for _, sn := range snaps {
		ids[sn.ID] = true
	}
	for _, sn := range snaps {
		for _, n := range sn.Names {
			if ids[n] {
				t.Errorf("name %q of snapshot %s is also a snapshot's id", n, sn.ID)
			}
		}
	}
}

// raceClaims runs claim for every writer at once; each must succeed or fail
// with ErrAlreadyExists, and at least one must win.
func raceClaims(t *testing.T, claim func(w int) error) {
	t.Helper()
	var (
		wg   sync.WaitGroup
		wins atomic.Int32
	)
	for w := range writers {
		wg.Go(func() {
			err := claim(w)
			switch {
			case err == nil:
				wins.Add(1)
			case !errors.Is(err, errdefs.ErrAlreadyExists):
				t.Errorf("claim %d: %v", w, err)
			}
		})
	}
	wg.Wait()
	if wins.Load() == 0 {
		t.Fatal("no claim won")
	}
}

// testRevokeRace has every writer revoke one key by its name at once:
// exactly one revokes it, the rest find no active key of that name, and the
// key keeps the one revocation time.
func testRevokeRace(ctx context.Context, t *testing.T, s store.Store) {
	must(t, "CreateAPIKey", s.CreateAPIKey(ctx, newKey("k1", "shared", 0)))
	var (
		wg   sync.WaitGroup
		wins atomic.Int32
	)
	for range writers {
		wg.Go(func() {
			err := s.RevokeAPIKey(ctx, "shared")
			switch {
			case err == nil:
				wins.Add(1)
			case !errdefs.IsNotFound(err):
				t.Errorf("RevokeAPIKey: %v", err)
			}
		})
	}
	wg.Wait()
	if n := wins.Load(); n != 1 {
		t.Fatalf("%d revocations by name succeeded, want 1", n)
	}
	if revokedAt(ctx, t, s, "k1") == nil {
		t.Fatal("key not revoked")
	}
}
