package sqlite

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t, "warren.db") })
}

// TestStoreInMemory runs the suite on ":memory:", which only works because
// the store keeps exactly one connection open.
func TestStoreInMemory(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(t.Context(), ":memory:")
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

// openTemp opens name in a per-test directory; the caller closes it.
func openTemp(t *testing.T, name string) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), name))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return s
}

// mustOpen opens path and closes it when the test ends.
func mustOpen(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestReopenKeepsData(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warren.db")
	s := mustOpen(t, path)
	started := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	revoked := started.Add(time.Hour)
	sb := &store.Sandbox{ID: "sb1", State: store.SandboxPaused, Metadata: map[string]string{"k": "v"}, StartedAt: started}
	tpl := &store.Template{ID: "t1", Aliases: []string{"python"}, CreatedAt: started}
	key := &store.APIKey{ID: "k1", Name: "ci", Hash: "h1", CreatedAt: started, RevokedAt: &revoked}
	if err := s.CreateSandbox(ctx, sb); err != nil {
		t.Fatal(err)
	}
	if err := s.PutTemplate(ctx, tpl); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateAPIKey(ctx, key); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = mustOpen(t, path)
	gotSB, err := s.GetSandbox(ctx, "sb1")
	if err != nil || gotSB.State != sb.State || gotSB.Metadata["k"] != "v" || !gotSB.StartedAt.Equal(started) {
		t.Errorf("GetSandbox after reopen = %+v, %v; want %+v", gotSB, err, sb)
	}
	gotTpl, err := s.GetTemplate(ctx, "python")
	if err != nil || gotTpl.ID != "t1" {
		t.Errorf("GetTemplate(python) after reopen = %+v, %v; want t1", gotTpl, err)
	}
	keys, err := s.ListAPIKeys(ctx)
	if err != nil || len(keys) != 1 || keys[0].RevokedAt == nil || !keys[0].RevokedAt.Equal(revoked) {
		t.Errorf("ListAPIKeys after reopen = %+v, %v; want k1 revoked at %v", keys, err, revoked)
	}
}

func TestOpenConfiguresConnection(t *testing.T) {
	t.Parallel()
	s := openTemp(t, "warren.db")
	defer s.Close()
	for pragma, want := range map[string]string{
		"journal_mode": "wal",
		"foreign_keys": "1",
		"busy_timeout": "5000",
		"synchronous":  "1", // NORMAL
	} {
		var got string
		if err := s.db.QueryRowContext(t.Context(), "PRAGMA "+pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", pragma, err)
		}
		if got != want {
			t.Errorf("PRAGMA %s = %s, want %s", pragma, got, want)
		}
	}
}

func TestOpenBadPath(t *testing.T) {
	t.Parallel()
	for _, path := range []string{"", "warren.db?mode=ro"} {
		if _, err := Open(t.Context(), path); !errors.Is(err, errdefs.ErrInvalidArgument) {
			t.Errorf("Open(%q) = %v, want ErrInvalidArgument", path, err)
		}
	}
	missingDir := filepath.Join(t.TempDir(), "no", "such", "dir", "warren.db")
	if _, err := Open(t.Context(), missingDir); err == nil {
		t.Errorf("Open(%q) succeeded, want an error", missingDir)
	}
}

// TestTwoHandlesOneFile stands in for two processes (`warren serve` and a CLI)
// sharing the data directory: busy_timeout and WAL let both write.
func TestTwoHandlesOneFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "warren.db")
	handles := []*Store{mustOpen(t, path), mustOpen(t, path)}
	var wg sync.WaitGroup
	for h, s := range handles {
		wg.Go(func() {
			for i := range 20 {
				id := string(rune('a'+h)) + strings.Repeat("x", i)
				if err := s.CreateSandbox(ctx, &store.Sandbox{ID: id}); err != nil {
					t.Errorf("handle %d: CreateSandbox: %v", h, err)
					return
				}
			}
		})
	}
	wg.Wait()
	list, err := handles[0].ListSandboxes(ctx)
	if err != nil || len(list) != 40 {
		t.Errorf("ListSandboxes = %d records, %v; want 40", len(list), err)
	}
}

// TestConcurrentOpen opens one new file from several handles at once: the
// migration transaction must serialize them so each version is applied once.
func TestConcurrentOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "warren.db")
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			s, err := Open(t.Context(), path)
			if err != nil {
				t.Errorf("Open: %v", err)
				return
			}
			_ = s.Close()
		})
	}
	wg.Wait()
	s := mustOpen(t, path)
	if got := recordedVersions(t, s.db); len(got) != len(migrations) {
		t.Errorf("schema_migrations = %v, want each of %d versions once", got, len(migrations))
	}
}

// TestFullDisk: a write the disk has no room for fails with
// errdefs.ErrNoSpace, whether it is a plain statement or a transaction,
// and leaves the database as it was; once there is room, writes work again.
// SQLite's max_page_count stands in for a full filesystem: it fails the
// write with the same SQLITE_FULL.
func TestFullDisk(t *testing.T) {
	ctx := t.Context()
	s := mustOpen(t, filepath.Join(t.TempDir(), "warren.db"))
	kept := &store.Sandbox{ID: "kept", State: store.SandboxRunning, Metadata: map[string]string{"k": "v"}}
	if err := s.CreateSandbox(ctx, kept); err != nil {
		t.Fatal(err)
	}
	var pages int
	if err := s.db.QueryRowContext(ctx, "PRAGMA page_count").Scan(&pages); err != nil {
		t.Fatal(err)
	}
	setMaxPages := func(n int) {
		t.Helper()
		if _, err := s.db.ExecContext(ctx, fmt.Sprintf("PRAGMA max_page_count = %d", n)); err != nil {
			t.Fatal(err)
		}
	}
	setMaxPages(pages)
	big := strings.Repeat("x", 64<<10) // more than any free page holds
	for _, tc := range []struct {
		name  string
		write func() error
	}{
		{"statement", func() error {
			return s.CreateSandbox(ctx, &store.Sandbox{ID: "new", State: store.SandboxRunning, Metadata: map[string]string{"big": big}})
		}},
		{"statement on a record", func() error {
			return s.UpdateSandbox(ctx, &store.Sandbox{ID: "kept", State: store.SandboxRunning, Metadata: map[string]string{"big": big}})
		}},
		{"transaction", func() error {
			return s.CreateEvent(ctx, &store.Event{ID: "ev1", Type: store.EventKilled, SandboxID: "kept", Data: []byte(`"` + big + `"`), Timestamp: time.Now()}, nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.write()
			if !errors.Is(err, errdefs.ErrNoSpace) || !strings.Contains(err.Error(), "disk is full") {
				t.Fatalf("write on a full disk: %v; want ErrNoSpace saying the disk is full", err)
			}
		})
	}
	got, err := s.GetSandbox(ctx, "kept")
	if err != nil || got.Metadata["k"] != "v" {
		t.Fatalf("the record after the failed writes: %+v, %v", got, err)
	}
	setMaxPages(1 << 30)
	if err := s.CreateSandbox(ctx, &store.Sandbox{ID: "new", State: store.SandboxRunning, Metadata: map[string]string{"big": big}}); err != nil {
		t.Fatalf("write once there is room: %v", err)
	}
}
