package retention

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// machine records what retention asks of the manager.
type machine struct {
	paused  map[string]time.Time
	snaps   []*store.Snapshot
	killed  []string
	reasons []string
	deleted []string
	failID  string
}

func (m *machine) PausedBefore(cutoff time.Time) []string {
	var out []string
	for id, at := range m.paused {
		if at.Before(cutoff) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func (m *machine) KillFor(_ context.Context, id, reason string) error {
	if id == m.failID {
		return errors.New("busy")
	}
	m.killed, m.reasons = append(m.killed, id), append(m.reasons, reason)
	return nil
}

func (m *machine) ListSnapshots(context.Context, string, string) ([]*store.Snapshot, error) {
	return m.snaps, nil
}

func (m *machine) DeleteSnapshot(_ context.Context, id string) error {
	if id == m.failID {
		return errors.New("busy")
	}
	m.deleted = append(m.deleted, id)
	return nil
}

func TestRetain(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)
	here := t.TempDir()
	tests := []struct {
		name        string
		opts        Options
		failID      string
		wantKilled  []string
		wantDeleted []string
	}{
		{name: "zero retentions keep everything", opts: Options{}},
		{name: "paused past an hour", opts: Options{Paused: time.Hour}, wantKilled: []string{"old", "older"}},
		{name: "a failed kill does not stop the others", opts: Options{Paused: time.Hour}, failID: "old", wantKilled: []string{"older"}},
		{name: "snapshots past a day, any directory", opts: Options{Snapshots: 24 * time.Hour}, wantDeleted: []string{"stale-here", "stale-elsewhere"}},
		{name: "on a node only those on this host", opts: Options{Snapshots: 24 * time.Hour, OnNode: true}, wantDeleted: []string{"stale-here"}},
		{name: "both", opts: Options{Paused: 3 * time.Hour, Snapshots: 72 * time.Hour}, wantKilled: []string{"older"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := &machine{
				paused: map[string]time.Time{"old": now.Add(-2 * time.Hour), "older": now.Add(-4 * time.Hour), "young": now.Add(-time.Minute)},
				snaps: []*store.Snapshot{
					{ID: "stale-here", Dir: here, CreatedAt: now.Add(-48 * time.Hour)},
					{ID: "stale-elsewhere", Dir: filepath.Join(here, "absent"), CreatedAt: now.Add(-48 * time.Hour)},
					{ID: "fresh", Dir: here, CreatedAt: now.Add(-time.Hour)},
				},
				failID: tc.failID,
			}
			New(m, tc.opts).Retain(context.Background(), now)
			if !slices.Equal(m.killed, tc.wantKilled) {
				t.Errorf("killed %v, want %v", m.killed, tc.wantKilled)
			}
			for _, r := range m.reasons {
				if r != sandbox.KillRetention {
					t.Errorf("killed for %q, want %q", r, sandbox.KillRetention)
				}
			}
			if !slices.Equal(m.deleted, tc.wantDeleted) {
				t.Errorf("deleted %v, want %v", m.deleted, tc.wantDeleted)
			}
		})
	}
}
