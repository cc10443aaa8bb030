package postgres

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/internal/store/sqlite"
	"github.com/warren-sandbox/warren/internal/store/storetest"
)

func TestStore(t *testing.T) {
	pg := pgtest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(t.Context(), pg.NewDatabase(t))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

// TestSchemaVersion holds the two stores' migrations level: a schema change
// is a new migration in both.
func TestSchemaVersion(t *testing.T) {
	if got, want := SchemaVersion(), sqlite.SchemaVersion(); got != want {
		t.Fatalf("postgres schema version %d, sqlite %d: add the migration to both stores", got, want)
	}
}

// TestOpenTogether opens one database from several goroutines at once, as
// a cluster's processes starting together do: the advisory lock lets one
// migrate, and every Open succeeds on the finished schema.
func TestOpenTogether(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			s, err := Open(t.Context(), url)
			if err == nil {
				err = s.CreateSandbox(t.Context(), &store.Sandbox{ID: "x"})
				if errors.Is(err, errdefs.ErrAlreadyExists) {
					err = nil
				}
				s.Close()
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
	}
	s, err := Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != SchemaVersion() {
		t.Fatalf("%d migrations recorded, want %d", n, SchemaVersion())
	}
}

// TestNewerSchemaRefused: a database a newer warren migrated is refused.
func TestNewerSchemaRefused(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	s, err := Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	_, err = s.pool.Exec(t.Context(), `INSERT INTO schema_migrations VALUES ($1, 'future.sql', now())`, SchemaVersion()+1)
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(t.Context(), url); !errors.Is(err, errdefs.ErrFailedPrecondition) {
		t.Fatalf("Open of a newer schema: %v, want ErrFailedPrecondition", err)
	}
}

// TestClaimRaceAcrossPools runs storetest.ClaimRace with its claimers
// spread over several Stores on one database, each with its own pool, as
// the processes of a cluster claim deliveries.
func TestClaimRaceAcrossPools(t *testing.T) {
	url := pgtest.Start(t).NewDatabase(t)
	var stores []store.Store
	for range 4 {
		s, err := Open(t.Context(), url)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	storetest.ClaimRace(t.Context(), t, stores)
}
