package park

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// The room's own judgements are tested here against a stand-in machine;
// parking and taking over real sandboxes through the manager's hooks is
// tested in internal/lifecycle (parking_test.go).

// machine stands in for the manager: the sandboxes it holds, and which
// of them another operation holds (busy).
type machine struct {
	mu   sync.Mutex
	live map[string]*store.Sandbox
	busy map[string]bool
}

func (m *machine) Holds(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[id] != nil
}

func (m *machine) WithSandbox(id string, wait bool, fn func(*store.Sandbox, runtime.Backend, bool)) bool {
	m.mu.Lock()
	sb, busy := m.live[id], m.busy[id]
	m.mu.Unlock()
	if sb == nil {
		return false
	}
	if !busy || wait {
		fn(sb, nil, false)
	}
	return true
}

func (m *machine) Backend(string) (runtime.Backend, bool) { return nil, false }

func (m *machine) StandParked(context.Context, *store.Sandbox, runtime.Backend, []string, []string, bool) error {
	return errors.New("not in these tests")
}

func (m *machine) Go(fn func(context.Context)) { fn(context.Background()) }

type events struct {
	mu  sync.Mutex
	got []*store.Event
}

func (l *events) Record(_ context.Context, e *store.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.got = append(l.got, e)
}

// newRoom is node "a"'s room over a fresh store and shared dir.
func newRoom(t *testing.T) (*Room, *machine, store.Store, *events) {
	t.Helper()
	st := sqlitetest.Open(t)
	if err := st.PutTemplate(t.Context(), &store.Template{ID: "base", RootfsPath: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	m := &machine{live: map[string]*store.Sandbox{}, busy: map[string]bool{}}
	evs := &events{}
	r := New(m, Options{Store: st, SharedDir: t.TempDir(), SnapshotDir: filepath.Join(t.TempDir(), "snapshots"),
		NodeName: "a", Events: evs})
	return r, m, st, evs
}

// parkedDirOf makes a parked directory for id with a manifest.
func parkedDirOf(t *testing.T, r *Room, id, manifest string) string {
	t.Helper()
	dir := r.path(id)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, parkManifest), []byte(manifest), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func record(t *testing.T, st store.Store, id, node, state string, parked bool) {
	t.Helper()
	sb := &store.Sandbox{ID: id, TemplateID: "base", Backend: "fake", State: state, Node: node, Parked: parked,
		StartedAt: time.Now().UTC(), EndAt: time.Now().Add(time.Hour).UTC()}
	if err := st.CreateSandbox(t.Context(), sb); err != nil {
		t.Fatal(err)
	}
}

// TestReadManifest: a parked directory is taken over only when its
// manifest names the sandbox and a stack a node can mount; anything else
// is a failed precondition (only a kill can end such a sandbox).
func TestReadManifest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, manifest string
		ok             bool
	}{
		{"whole", `{"id":"s1","layers":2,"templateLayers":["/t/a"]}`, true},
		{"not json", `{"id":`, false},
		{"another sandbox's", `{"id":"s2","layers":1}`, false},
		{"no layer", `{"id":"s1","layers":0}`, false},
		{"too deep", `{"id":"s1","layers":200}`, false},
		{"missing", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s1")
			if tc.manifest != "" {
				if err := os.MkdirAll(dir, 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, parkManifest), []byte(tc.manifest), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			man, err := readManifest(dir, "s1")
			if tc.ok != (err == nil) {
				t.Fatalf("readManifest = %+v, %v; want ok %v", man, err, tc.ok)
			}
			if err != nil && !errors.Is(err, errdefs.ErrFailedPrecondition) {
				t.Errorf("error %v is not a failed precondition", err)
			}
		})
	}
}

// TestCollectParked: the sweep removes the parked directories nothing
// will read and keeps the rest.
func TestCollectParked(t *testing.T) {
	t.Parallel()
	r, m, st, _ := newRoom(t)
	m.live["held0parked"] = &store.Sandbox{ID: "held0parked", State: store.SandboxPaused, Parked: true}
	m.live["held0resumed"] = &store.Sandbox{ID: "held0resumed", State: store.SandboxRunning}
	m.live["held0busy"] = &store.Sandbox{ID: "held0busy", State: store.SandboxRunning}
	m.busy["held0busy"] = true
	record(t, st, "mine0resumed", "a", store.SandboxRunning, false)
	record(t, st, "mine0paused", "a", store.SandboxPaused, false)
	record(t, st, "handed0here", "a", store.SandboxPaused, true)
	record(t, st, "other0node", "b", store.SandboxRunning, false)
	keep := map[string]bool{
		"held0parked": true, "held0resumed": false, "held0busy": true,
		"mine0resumed": false, "mine0paused": true, "handed0here": true, "other0node": true,
		"gone0record": false,
	}
	for id := range keep {
		parkedDirOf(t, r, id, `{}`)
	}
	root := filepath.Join(r.opts.SharedDir, parkedDir)
	stale, fresh := filepath.Join(root, ".x-1"+parkPartSuffix), filepath.Join(root, ".y-2"+parkGoneSuffix)
	for _, p := range []string{stale, fresh} {
		if err := os.MkdirAll(p, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * partMaxAge)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	r.collectParked(t.Context())
	for id, want := range keep {
		_, err := os.Stat(r.path(id))
		if got := err == nil; got != want {
			t.Errorf("parked dir of %s kept = %v, want %v", id, got, want)
		}
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a dir left half-written an hour ago: %v, want removed", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a dir being removed now: %v, want left to its remover", err)
	}
	entries, _ := os.ReadDir(root)
	for _, de := range entries {
		if strings.HasSuffix(de.Name(), parkGoneSuffix) && !strings.HasPrefix(de.Name(), ".y-") {
			t.Errorf("removed dir %s left behind", de.Name())
		}
	}
}

// TestKillHanded: a sandbox handed here parked is killed without being
// rebuilt (record, parked dir gone, killed event); what is not such a
// sandbox is left to the manager.
func TestKillHanded(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		node       string
		held       bool
		parked     bool
		wantKilled bool
	}{
		{"handed here, parked", "a", false, true, true},
		{"handed here, taken over meanwhile", "a", true, true, false},
		{"on another node", "b", false, true, false},
		{"not parked", "a", false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r, m, st, evs := newRoom(t)
			record(t, st, "s1", tc.node, store.SandboxPaused, tc.parked)
			if tc.held {
				m.live["s1"] = &store.Sandbox{ID: "s1"}
			}
			dir := parkedDirOf(t, r, "s1", `{}`)
			killed, err := r.KillHanded(t.Context(), "s1", "requested")
			if err != nil || killed != tc.wantKilled {
				t.Fatalf("KillHanded = %v, %v; want %v", killed, err, tc.wantKilled)
			}
			_, gerr := st.GetSandbox(t.Context(), "s1")
			_, derr := os.Stat(dir)
			if tc.wantKilled != errdefs.IsNotFound(gerr) || tc.wantKilled != os.IsNotExist(derr) {
				t.Errorf("after KillHanded: record %v, parked dir %v; want both gone %v", gerr, derr, tc.wantKilled)
			}
			if n := len(evs.got); (n == 1) != tc.wantKilled || (n == 1 && evs.got[0].Type != store.EventKilled) {
				t.Errorf("events %+v, want one killed event only if killed", evs.got)
			}
		})
	}
}

// TestReplaceDir: publishing a parked directory replaces the older one
// whole.
func TestReplaceDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dst, tmp := filepath.Join(root, "s1"), filepath.Join(root, ".s1.part")
	for dir, file := range map[string]string{dst: "old", tmp: "new"} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := replaceDir(tmp, dst); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dst)
	if len(entries) != 1 || entries[0].Name() != "new" {
		t.Errorf("published dir holds %v, want the new state only", entries)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("the old state under the temporary name: %v", err)
	}
}
