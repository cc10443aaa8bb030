package snapshot

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// The room's own judgements are tested here against a stand-in machine;
// snapshots and forks of real sandboxes through the manager, and their
// crash recovery, are tested in internal/lifecycle (snapshot_test.go,
// snapshot_race_test.go, reconcile_test.go) and test/e2e.

// machine stands in for the manager: the layers its sandboxes stand on,
// or an error listing them; it checkpoints nothing.
type machine struct {
	standing    []string
	standingErr error
	checkpoints int
}

func (m *machine) Get(context.Context, string) (*store.Sandbox, error) {
	return &store.Sandbox{ID: "s1", TemplateID: "base"}, nil
}

func (m *machine) Checkpoint(context.Context, string, string, func(*store.Snapshot) error) (*store.Snapshot, *store.Sandbox, error) {
	m.checkpoints++
	return nil, nil, errors.New("no checkpoints in these tests")
}

func (m *machine) CreateFrom(context.Context, sandbox.CreateRequest, *store.Template, *store.Snapshot) (*store.Sandbox, error) {
	return nil, errors.New("no creates in these tests")
}

func (m *machine) StandingLayers(context.Context) ([]string, error) { return m.standing, m.standingErr }

func (m *machine) Go(fn func(context.Context)) { fn(context.Background()) }

// snapDir makes snapshot directory name under dir with a layer and a
// memory image, and returns it.
func snapDir(t *testing.T, dir, name string) string {
	t.Helper()
	d := filepath.Join(dir, name)
	for _, sub := range []string{"layer", "memory"} {
		if err := os.MkdirAll(filepath.Join(d, sub), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	return d
}

// TestCollect: the collector keeps what a listed snapshot or a sandbox
// stands on (dropping an unlisted one's memory image), removes the rest,
// and removes nothing when it cannot tell what is used.
func TestCollect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		standingErr error
		// what is left of each directory: "all", "layer" (memory image
		// gone) or "none".
		want map[string]string
	}{
		{"sandboxes listed", nil, map[string]string{"listed": "all", "stood-on": "layer", "by-listed": "layer", "unused": "none"}},
		{"sandboxes unknown", errors.New("backend down"), map[string]string{"listed": "all", "stood-on": "all", "by-listed": "all", "unused": "all"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := sqlitetest.Open(t)
			dir := t.TempDir()
			d := map[string]string{}
			for name := range tc.want {
				d[name] = snapDir(t, dir, name)
			}
			// A listed snapshot standing on another, unlisted one's layer.
			listed := &store.Snapshot{ID: "listed", Dir: d["listed"], CreatedAt: time.Now().UTC(),
				Layers: []string{filepath.Join(d["listed"], "layer"), filepath.Join(d["by-listed"], "layer")}}
			if err := st.CreateSnapshot(t.Context(), listed); err != nil {
				t.Fatal(err)
			}
			m := &machine{standing: []string{filepath.Join(d["stood-on"], "layer")}, standingErr: tc.standingErr}
			r := New(m, Options{Store: st, Dir: dir})
			r.Collect(t.Context())
			for name, want := range tc.want {
				got := "none"
				if _, err := os.Stat(d[name]); err == nil {
					got = "layer"
					if _, err := os.Stat(filepath.Join(d[name], "memory")); err == nil {
						got = "all"
					}
				}
				if got != want {
					t.Errorf("%s: %s left, want %s", name, got, want)
				}
			}
		})
	}
}

// TestRefusals: a bad name, a fork count out of bounds or a server
// without a snapshot dir are refused before any sandbox is touched.
func TestRefusals(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		dir  bool
		call func(r *Room) error
		want func(error) bool
	}{
		{"bad name", true, func(r *Room) error { _, err := r.Snapshot(t.Context(), "s1", "bad name!"); return err }, errdefs.IsInvalidArgument},
		{"name too long", true, func(r *Room) error {
			_, err := r.Snapshot(t.Context(), "s1", string(make([]byte, 129)))
			return err
		}, errdefs.IsInvalidArgument},
		{"no forks", true, func(r *Room) error { _, err := r.Fork(t.Context(), "s1", 0, time.Minute); return err }, errdefs.IsInvalidArgument},
		{"too many forks", true, func(r *Room) error {
			_, err := r.Fork(t.Context(), "s1", sandbox.MaxForks+1, time.Minute)
			return err
		}, errdefs.IsInvalidArgument},
		{"no snapshot dir", false, func(r *Room) error { _, err := r.Snapshot(t.Context(), "s1", "ok"); return err },
			func(err error) bool { return errors.Is(err, errdefs.ErrNotImplemented) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &machine{}
			opts := Options{Store: sqlitetest.Open(t)}
			if tc.dir {
				opts.Dir = t.TempDir()
			}
			if err := tc.call(New(m, opts)); !tc.want(err) {
				t.Errorf("err = %v", err)
			}
			if m.checkpoints != 0 {
				t.Errorf("%d checkpoints taken for a refused call", m.checkpoints)
			}
		})
	}
}
