package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// far is a cutoff before every record the idempotency tests make.
var far = at(-1000)

func idemKey(team, key, fp string, createdMin int) *store.IdempotencyKey {
	return &store.IdempotencyKey{TeamID: team, Key: key, Fingerprint: fp, Owner: "n1", CreatedAt: at(createdMin)}
}

// claimIdem claims k with cutoffs that keep every record.
func claimIdem(ctx context.Context, t *testing.T, s store.Store, k *store.IdempotencyKey) (*store.IdempotencyKey, bool) {
	t.Helper()
	kept, claimed, err := s.ClaimIdempotencyKey(ctx, k, far, far)
	must(t, "ClaimIdempotencyKey "+k.Key, err)
	if claimed != (kept == nil) {
		t.Fatalf("ClaimIdempotencyKey %s: claimed %v with kept record %+v", k.Key, claimed, kept)
	}
	return kept, claimed
}

var idempotencyTests = []test{
	{"ClaimCompleteReplay", func(ctx context.Context, t *testing.T, s store.Store) {
		if _, ok := claimIdem(ctx, t, s, idemKey("t1", "k", "fp1", 0)); !ok {
			t.Fatal("first claim not claimed")
		}
		kept, ok := claimIdem(ctx, t, s, idemKey("t1", "k", "fp2", 1))
		if ok {
			t.Fatal("second claim of a pending key claimed it")
		}
		want := idemKey("t1", "k", "fp1", 0)
		want.CreatedAt = want.CreatedAt.UTC()
		wantEqual(t, "kept pending record", kept, want)
		if _, ok := claimIdem(ctx, t, s, idemKey("t2", "k", "fp1", 0)); !ok {
			t.Fatal("another team's key of the same name was not claimable: keys are per team")
		}
		must(t, "CompleteIdempotencyKey", s.CompleteIdempotencyKey(ctx, "t1", "k", "sb1", 201, []byte(`{"sandboxID":"sb1"}`)))
		wantErr(t, "CompleteIdempotencyKey twice", s.CompleteIdempotencyKey(ctx, "t1", "k", "sb2", 201, nil), errdefs.ErrNotFound)
		wantErr(t, "CompleteIdempotencyKey unclaimed", s.CompleteIdempotencyKey(ctx, "t1", "nope", "sb2", 201, nil), errdefs.ErrNotFound)
		kept, _ = claimIdem(ctx, t, s, idemKey("t1", "k", "fp1", 2))
		want.SandboxID, want.Status, want.Response = "sb1", 201, []byte(`{"sandboxID":"sb1"}`)
		wantEqual(t, "kept done record", kept, want)
		must(t, "ReleaseIdempotencyKey of a done record", s.ReleaseIdempotencyKey(ctx, "t1", "k"))
		if kept, _ = claimIdem(ctx, t, s, idemKey("t1", "k", "fp1", 3)); kept == nil || kept.SandboxID != "sb1" {
			t.Fatalf("a release removed a done record: %+v", kept)
		}
	}},
	{"ReleaseFailedCreate", func(ctx context.Context, t *testing.T, s store.Store) {
		claimIdem(ctx, t, s, idemKey("t1", "k", "fp1", 0))
		must(t, "ReleaseIdempotencyKey", s.ReleaseIdempotencyKey(ctx, "t1", "k"))
		must(t, "ReleaseIdempotencyKey again", s.ReleaseIdempotencyKey(ctx, "t1", "k"))
		if _, ok := claimIdem(ctx, t, s, idemKey("t1", "k", "fp2", 1)); !ok {
			t.Fatal("a released key was not claimable again")
		}
	}},
	{"ReleaseOfOwner", func(ctx context.Context, t *testing.T, s store.Store) {
		a, b, c := idemKey("t1", "a", "fp", 0), idemKey("t1", "b", "fp", 0), idemKey("t1", "c", "fp", 0)
		b.Owner = "n2"
		for _, k := range []*store.IdempotencyKey{a, b, c} {
			claimIdem(ctx, t, s, k)
		}
		must(t, "CompleteIdempotencyKey c", s.CompleteIdempotencyKey(ctx, "t1", "c", "sb", 201, nil))
		n, err := s.ReleaseIdempotencyKeysOf(ctx, "n1")
		must(t, "ReleaseIdempotencyKeysOf", err)
		if n != 1 {
			t.Fatalf("ReleaseIdempotencyKeysOf released %d, want 1 (a: pending and n1's)", n)
		}
		for key, free := range map[string]bool{"a": true, "b": false, "c": false} {
			if _, ok := claimIdem(ctx, t, s, idemKey("t1", key, "fp", 1)); ok != free {
				t.Errorf("key %s claimable = %v after n1's release, want %v", key, ok, free)
			}
		}
	}},
	{"ExpiryAndStaleness", testIdemExpiry},
	{"ConcurrentClaims", func(ctx context.Context, t *testing.T, s store.Store) {
		const n = 8
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			wins int
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, claimed, err := s.ClaimIdempotencyKey(ctx, idemKey("t1", "k", "fp", i), far, far)
				if err != nil {
					t.Errorf("claim %d: %v", i, err)
				}
				mu.Lock()
				defer mu.Unlock()
				if claimed {
					wins++
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("%d of %d concurrent claims of one key won, want exactly 1", wins, n)
		}
	}},
	{"Invalid", func(ctx context.Context, t *testing.T, s store.Store) {
		for name, k := range map[string]*store.IdempotencyKey{
			"no key":         {TeamID: "t", Fingerprint: "fp", CreatedAt: at(0)},
			"no fingerprint": {TeamID: "t", Key: "k", CreatedAt: at(0)},
			"no time":        {TeamID: "t", Key: "k", Fingerprint: "fp"},
			"already done":   {TeamID: "t", Key: "k", Fingerprint: "fp", SandboxID: "sb", CreatedAt: at(0)},
		} {
			_, _, err := s.ClaimIdempotencyKey(ctx, k, far, far)
			wantErr(t, "ClaimIdempotencyKey "+name, err, errdefs.ErrInvalidArgument)
		}
		wantErr(t, "CompleteIdempotencyKey without a sandbox", s.CompleteIdempotencyKey(ctx, "t", "k", "", 201, nil), errdefs.ErrInvalidArgument)
	}},
}

// testIdemExpiry: a record past its expiry gives way to a new claim (and
// is purged, whatever its team); a pending claim past the staleness bound
// does, a done one does not.
func testIdemExpiry(ctx context.Context, t *testing.T, s store.Store) {
	tests := []struct {
		name          string
		done          bool
		expire, stale time.Time
		wantClaimed   bool
	}{
		{"pending, fresh", false, at(-1), at(-1), false},
		{"pending, stale", false, at(-1), at(1), true},
		{"done, stale bound passed", true, at(-1), at(1), false},
		{"done, expired", true, at(1), at(-1), true},
		{"pending, expired", false, at(1), at(-1), true},
	}
	for i, tt := range tests {
		key := string(rune('a' + i))
		claimIdem(ctx, t, s, idemKey("t1", key, "fp", 0))
		if tt.done {
			must(t, "CompleteIdempotencyKey", s.CompleteIdempotencyKey(ctx, "t1", key, "sb", 201, nil))
		}
		kept, claimed, err := s.ClaimIdempotencyKey(ctx, idemKey("t1", key, "fp2", 2), tt.expire, tt.stale)
		must(t, tt.name, err)
		if claimed != tt.wantClaimed {
			t.Errorf("%s: claimed = %v (kept %+v), want %v", tt.name, claimed, kept, tt.wantClaimed)
		}
	}
	// Expired records of every team go with any claim.
	claimIdem(ctx, t, s, idemKey("other", "old", "fp", 0))
	must(t, "CompleteIdempotencyKey old", s.CompleteIdempotencyKey(ctx, "other", "old", "sb", 201, nil))
	if _, _, err := s.ClaimIdempotencyKey(ctx, idemKey("t1", "z", "fp", 5), at(1), far); err != nil {
		t.Fatal(err)
	}
	if _, ok := claimIdem(ctx, t, s, idemKey("other", "old", "fp9", 6)); !ok {
		t.Fatal("an expired record of another team survived a claim's purge")
	}
}
