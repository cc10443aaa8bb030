// Package sqlitetest opens real SQLite stores for the tests of the layers
// above the store, in place of an in-memory imitation: what those tests
// see is what `warren serve` runs on.
//
// The schema is built once per test binary, in a file that is then kept
// as bytes; each Open writes those bytes to a file in t.TempDir(). So a
// test pays for a file copy, not for the whole migration history.
package sqlitetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite"
)

var (
	once     sync.Once
	migrated []byte // an empty store's file, schema applied
	buildErr error
)

// Open returns an empty store in a file of its own under t.TempDir(),
// closed when the test ends.
func Open(t testing.TB) store.Store {
	t.Helper()
	once.Do(func() { migrated, buildErr = build() })
	if buildErr != nil {
		t.Fatalf("sqlitetest: %v", buildErr)
	}
	path := filepath.Join(t.TempDir(), "warren.db")
	if err := os.WriteFile(path, migrated, 0o600); err != nil {
		t.Fatalf("sqlitetest: %v", err)
	}
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("sqlitetest: opening %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("sqlitetest: closing %s: %v", path, err)
		}
	})
	return st
}

// build migrates a new database and returns its file. Closing the store
// checkpoints the write-ahead log into the file, so the bytes hold the
// whole schema.
func build() ([]byte, error) {
	dir, err := os.MkdirTemp("", "sqlitetest-")
	if err != nil {
		return nil, fmt.Errorf("building the template store: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "warren.db")
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		return nil, fmt.Errorf("building the template store: %w", err)
	}
	if err := st.Close(); err != nil {
		return nil, fmt.Errorf("building the template store: %w", err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("building the template store: %w", err)
	}
	return b, nil
}
