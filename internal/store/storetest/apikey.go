package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// newKey returns an active key. The hash only needs to be unique here; the
// store never interprets it.
func newKey(id, name string, createdMin int) *store.APIKey {
	return &store.APIKey{
		ID:        id,
		Name:      name,
		Hash:      "hash-" + id,
		Mask:      "e2b_ab12…9f0e",
		Admin:     id == "admin",
		TeamID:    "team-" + name,
		Scopes:    []string{"sandboxes:read", "templates:write"},
		CreatedAt: at(createdMin),
		ExpiresAt: ptr(at(createdMin + 60)),
	}
}

func ptr[T any](v T) *T { return &v }

func storedKey(k *store.APIKey) *store.APIKey {
	c := *k
	c.CreatedAt = k.CreatedAt.UTC()
	c.Scopes = slices.Clone(k.Scopes)
	if k.ExpiresAt != nil {
		e := k.ExpiresAt.UTC()
		c.ExpiresAt = &e
	}
	if k.RevokedAt != nil {
		r := k.RevokedAt.UTC()
		c.RevokedAt = &r
	}
	return &c
}

// createKeys stores keys or fails t.
func createKeys(ctx context.Context, t *testing.T, s store.Store, keys ...*store.APIKey) {
	t.Helper()
	for _, k := range keys {
		must(t, "CreateAPIKey "+k.ID, s.CreateAPIKey(ctx, k))
	}
}

// wantActive checks whether the key with this id can still be found by hash.
func wantActive(ctx context.Context, t *testing.T, s store.Store, id string, active bool) {
	t.Helper()
	got, err := s.GetAPIKeyByHash(ctx, "hash-"+id)
	if !active {
		wantErr(t, "GetAPIKeyByHash revoked "+id, err, errdefs.ErrNotFound)
		return
	}
	must(t, "GetAPIKeyByHash "+id, err)
	if got.ID != id || got.RevokedAt != nil {
		t.Fatalf("GetAPIKeyByHash %s = %+v, want the active key %s", id, got, id)
	}
}

// revokedAt returns the RevokedAt of key id as listed.
func revokedAt(ctx context.Context, t *testing.T, s store.Store, id string) *time.Time {
	t.Helper()
	list, err := s.ListAPIKeys(ctx)
	must(t, "ListAPIKeys", err)
	for _, k := range list {
		if k.ID == id {
			return k.RevokedAt
		}
	}
	t.Fatalf("ListAPIKeys has no key %s", id)
	return nil
}

var apiKeyTests = []test{
	{"CreateGetByHash", func(ctx context.Context, t *testing.T, s store.Store) {
		k := newKey("admin", "bootstrap", 0)
		createKeys(ctx, t, s, k, newKey("k2", "ci", 1))
		got, err := s.GetAPIKeyByHash(ctx, k.Hash)
		must(t, "GetAPIKeyByHash", err)
		wantEqual(t, "GetAPIKeyByHash", got, storedKey(k))
		_, err = s.GetAPIKeyByHash(ctx, "hash-unknown")
		wantErr(t, "GetAPIKeyByHash unknown", err, errdefs.ErrNotFound)
	}},
	{"Duplicates", func(ctx context.Context, t *testing.T, s store.Store) {
		createKeys(ctx, t, s, newKey("k1", "ci", 0))
		wantErr(t, "CreateAPIKey same id", s.CreateAPIKey(ctx, &store.APIKey{ID: "k1", Hash: "other"}), errdefs.ErrAlreadyExists)
		wantErr(t, "CreateAPIKey same hash", s.CreateAPIKey(ctx, &store.APIKey{ID: "k2", Hash: "hash-k1"}), errdefs.ErrAlreadyExists)
		// Names need not be unique.
		createKeys(ctx, t, s, newKey("k3", "ci", 0))
		list, err := s.ListAPIKeys(ctx)
		must(t, "ListAPIKeys", err)
		wantEqual(t, "ListAPIKeys", ids(list), []string{"k1", "k3"})
	}},
	{"InvalidArgument", func(ctx context.Context, t *testing.T, s store.Store) {
		wantErr(t, "CreateAPIKey nil", s.CreateAPIKey(ctx, nil), errdefs.ErrInvalidArgument)
		wantErr(t, "CreateAPIKey no id", s.CreateAPIKey(ctx, &store.APIKey{Hash: "h"}), errdefs.ErrInvalidArgument)
		wantErr(t, "CreateAPIKey no hash", s.CreateAPIKey(ctx, &store.APIKey{ID: "k"}), errdefs.ErrInvalidArgument)
	}},
	{"ListOrder", func(ctx context.Context, t *testing.T, s store.Store) {
		createKeys(ctx, t, s, newKey("c", "x", 3), newKey("b", "x", 1), newKey("a", "x", 3))
		list, err := s.ListAPIKeys(ctx)
		must(t, "ListAPIKeys", err)
		wantEqual(t, "ListAPIKeys order (oldest CreatedAt first, then id)", ids(list), []string{"b", "a", "c"})
		wantEqual(t, "listed record", list[0], storedKey(newKey("b", "x", 1)))
	}},
	{"RevokeByID", func(ctx context.Context, t *testing.T, s store.Store) {
		createKeys(ctx, t, s, newKey("k1", "ci", 0), newKey("k2", "ci", 0))
		before := time.Now()
		must(t, "RevokeAPIKey", s.RevokeAPIKey(ctx, "k1"))
		after := time.Now()
		wantActive(ctx, t, s, "k1", false)
		wantActive(ctx, t, s, "k2", true)
		first := revokedAt(ctx, t, s, "k1")
		if first == nil || first.Before(before.Add(-time.Second)) || first.After(after.Add(time.Second)) {
			t.Fatalf("RevokedAt = %v, want a time in [%v, %v]", first, before, after)
		}
		// Revoking again by id succeeds and keeps the original time.
		must(t, "RevokeAPIKey again", s.RevokeAPIKey(ctx, "k1"))
		wantEqual(t, "RevokedAt after second revoke", revokedAt(ctx, t, s, "k1"), first)
	}},
	{"RevokeByName", func(ctx context.Context, t *testing.T, s store.Store) {
		createKeys(ctx, t, s, newKey("k1", "ci", 0), newKey("k2", "laptop", 0))
		must(t, "RevokeAPIKey by name", s.RevokeAPIKey(ctx, "ci"))
		wantActive(ctx, t, s, "k1", false)
		wantActive(ctx, t, s, "k2", true)
		// Only active keys count: with the old "ci" revoked, a new "ci"
		// key is the one match.
		wantErr(t, "RevokeAPIKey revoked name", s.RevokeAPIKey(ctx, "ci"), errdefs.ErrNotFound)
		createKeys(ctx, t, s, newKey("k3", "ci", 1))
		must(t, "RevokeAPIKey reused name", s.RevokeAPIKey(ctx, "ci"))
		wantActive(ctx, t, s, "k3", false)
	}},
	{"RevokeAmbiguousName", func(ctx context.Context, t *testing.T, s store.Store) {
		createKeys(ctx, t, s, newKey("k1", "ci", 0), newKey("k2", "ci", 0))
		wantErr(t, "RevokeAPIKey ambiguous", s.RevokeAPIKey(ctx, "ci"), errdefs.ErrInvalidArgument)
		wantActive(ctx, t, s, "k1", true)
		wantActive(ctx, t, s, "k2", true)
	}},
	{"RevokeIDBeforeName", func(ctx context.Context, t *testing.T, s store.Store) {
		// Key k2 is named after k1's id; the id wins.
		createKeys(ctx, t, s, newKey("k1", "ci", 0), newKey("k2", "k1", 0))
		must(t, "RevokeAPIKey", s.RevokeAPIKey(ctx, "k1"))
		wantActive(ctx, t, s, "k1", false)
		wantActive(ctx, t, s, "k2", true)
	}},
	{"Rename", func(ctx context.Context, t *testing.T, s store.Store) {
		must(t, "CreateAPIKey", s.CreateAPIKey(ctx, newKey("k1", "ci", 0)))
		must(t, "RenameAPIKey", s.RenameAPIKey(ctx, "k1", "deploy"))
		got, err := s.GetAPIKeyByHash(ctx, "hash-k1")
		must(t, "GetAPIKeyByHash", err)
		want := storedKey(newKey("k1", "ci", 0))
		want.Name = "deploy"
		wantEqual(t, "renamed key", got, want)
		wantErr(t, "RenameAPIKey unknown", s.RenameAPIKey(ctx, "nope", "x"), errdefs.ErrNotFound)
	}},
	{"RevokeUnknown", func(ctx context.Context, t *testing.T, s store.Store) {
		createKeys(ctx, t, s, newKey("k1", "ci", 0))
		wantErr(t, "RevokeAPIKey", s.RevokeAPIKey(ctx, "nope"), errdefs.ErrNotFound)
		wantActive(ctx, t, s, "k1", true)
	}},
	{"Copies", func(ctx context.Context, t *testing.T, s store.Store) {
		createKeys(ctx, t, s, newKey("k1", "ci", 0))
		must(t, "RevokeAPIKey", s.RevokeAPIKey(ctx, "k1"))
		list, err := s.ListAPIKeys(ctx)
		must(t, "ListAPIKeys", err)
		want := *list[0].RevokedAt
		*list[0].RevokedAt = time.Time{}
		list[0].Name = "changed"
		got := revokedAt(ctx, t, s, "k1")
		wantEqual(t, "RevokedAt after caller changed the returned one", *got, want)
	}},
}
