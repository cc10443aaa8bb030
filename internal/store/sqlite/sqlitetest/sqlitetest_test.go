package sqlitetest

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite"
)

// TestOpenIsEmptyAndOwn: every Open is a migrated, empty store of its own,
// so one test's records never show in another's.
func TestOpenIsEmptyAndOwn(t *testing.T) {
	ctx := t.Context()
	a, b := Open(t), Open(t)
	if err := a.CreateSandbox(ctx, &store.Sandbox{ID: "sb1"}); err != nil {
		t.Fatalf("CreateSandbox: %v", err)
	}
	if _, err := b.GetSandbox(ctx, "sb1"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("second store GetSandbox = %v, want ErrNotFound", err)
	}
	if got, err := a.GetSandbox(ctx, "sb1"); err != nil || got.ID != "sb1" {
		t.Fatalf("GetSandbox = %v, %v", got, err)
	}
}

// BenchmarkOpen compares Open, which copies the migrated file, with
// sqlite.Open migrating a new file, as each test would otherwise.
func BenchmarkOpen(b *testing.B) {
	b.Run("copy", func(b *testing.B) {
		for b.Loop() {
			Open(b)
		}
	})
	b.Run("migrate", func(b *testing.B) {
		for b.Loop() {
			st, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "warren.db"))
			if err != nil {
				b.Fatal(err)
			}
			st.Close()
		}
	})
}
