package lifecycle

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/park"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// The manager's side of parking (its Parker hooks) is tested here, with
// the parking room of internal/park registered as the server does.

// Where the room parks, under the shared dir, and what each parked
// directory must hold.
const (
	parkedDir    = "parked"
	parkManifest = "manifest.json"
)

// parkOn registers a parking room on m, parking in shared.
func parkOn(m *Manager, shared string) *park.Room {
	r := park.New(m, park.Options{Store: m.opts.Store, SharedDir: shared, SnapshotDir: m.opts.SnapshotDir,
		NodeName: m.opts.NodeName, Events: m.opts.Events})
	m.SetParker(r)
	return r
}

// twoNodes is node a (e.m) and node b on one store and one shared dir,
// each with a backend and snapshot dir of its own; rb is b's parking room.
func twoNodes(t *testing.T) (e *env, b *Manager, bBackend *fake.Backend, shared string, rb *park.Room) {
	t.Helper()
	shared = t.TempDir()
	evs := &eventLog{}
	e = newEnvWith(t, func(o *Options) { o.NodeName, o.Events = "a", evs })
	parkOn(e.m, shared)
	opts := e.m.opts
	bBackend = fake.New("fake")
	bBackend.UseIP(e.envdIP(t))
	opts.NodeName, opts.Backends = "b", map[string]runtime.Backend{"fake": bBackend}
	opts.SnapshotDir = filepath.Join(t.TempDir(), "snapshots")
	b, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, b)
	return e, b, bBackend, shared, parkOn(b, shared)
}

// envdIP is the address the env's stand-in envd listens on.
func (e *env) envdIP(t *testing.T) netip.Addr {
	t.Helper()
	sb := e.create(t, sandbox.CreateRequest{})
	defer func() { _ = e.m.Kill(e.ctx, sb.ID) }()
	return netip.MustParseAddr(sb.IP)
}

// parkedSandbox creates a sandbox on e's node, pauses it with its memory
// and waits until it is recorded parked.
func parkedSandbox(t *testing.T, e *env) *store.Sandbox {
	t.Helper()
	sb := e.create(t, sandbox.CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	return waitParked(t, e.st, sb.ID)
}

// waitParked waits until sandbox id is recorded parked.
func waitParked(t *testing.T, st store.Store, id string) *store.Sandbox {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		sb, err := st.GetSandbox(t.Context(), id)
		if err == nil && sb.Parked {
			return sb
		}
		if time.Now().After(end) {
			t.Fatalf("sandbox %s never recorded parked: %+v, %v", id, sb, err)
		}
	}
}

// TestParkAndTakeOver: a paused sandbox is parked on the shared dir; once
// the cluster hands it to node b, b takes it over on the first request,
// resumes it there and drops the parked copy; node a, back, destroys
// only its own copy, and a's late writes cannot take the record back.
func TestParkAndTakeOver(t *testing.T) {
	t.Parallel()
	e, b, bBackend, shared, _ := twoNodes(t)
	sb := parkedSandbox(t, e)
	dir := filepath.Join(shared, parkedDir, sb.ID)
	if _, err := os.Stat(filepath.Join(dir, parkManifest)); err != nil {
		t.Fatalf("parked dir: %v", err)
	}
	if _, err := b.Get(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("b took over a sandbox still on a: %v", err)
	}
	if err := e.st.MoveSandbox(e.ctx, sb.ID, "a", "b"); err != nil {
		t.Fatalf("MoveSandbox: %v", err)
	}
	got, resumed, err := b.Connect(e.ctx, sb.ID, time.Minute, true)
	if err != nil || !resumed || got.State != store.SandboxRunning {
		t.Fatalf("Connect on b = %+v, %v, %v; want it resumed there", got, resumed, err)
	}
	if inst, err := bBackend.Inspect(e.ctx, sb.ID); err != nil || inst.State != runtime.StateRunning {
		t.Fatalf("b's instance: %+v, %v", inst, err)
	}
	rec, err := e.st.GetSandbox(e.ctx, sb.ID)
	if err != nil || rec.Node != "b" || rec.Parked || rec.State != store.SandboxRunning {
		t.Fatalf("record after the take-over: %+v, %v", rec, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("parked dir after a resume: %v, want it gone", err)
	}
	// Node a comes back: its resume is refused, and its heartbeat's
	// DropLost destroys its copy without touching the record.
	if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true); err == nil {
		t.Error("a resumed a sandbox handed to b")
	}
	if n, err := e.m.DropLost(e.ctx); err != nil || n != 1 {
		t.Errorf("DropLost on a = %d, %v; want its copy destroyed", n, err)
	}
	if _, err := e.b.Inspect(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
		t.Errorf("a's instance after DropLost: %v", err)
	}
	if rec, err := e.st.GetSandbox(e.ctx, sb.ID); err != nil || rec.Node != "b" || rec.State != store.SandboxRunning {
		t.Errorf("record after a let go: %+v, %v", rec, err)
	}
	if err := b.Kill(e.ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.st.GetSandbox(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
		t.Errorf("record after the kill on b: %v", err)
	}
}

// TestTakeOverParkedSweep: the heartbeat's sweep takes over what was
// handed to the node, paused and still parked (so a third node could
// take it again), and removes parked dirs whose sandboxes are gone.
func TestTakeOverParkedSweep(t *testing.T) {
	t.Parallel()
	e, b, _, shared, rb := twoNodes(t)
	sb := e.create(t, sandbox.CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, false); err != nil {
		t.Fatal(err)
	}
	waitParked(t, e.st, sb.ID)
	if err := e.st.MoveSandbox(e.ctx, sb.ID, "a", "b"); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(shared, parkedDir, "gone0000000000000000")
	if err := os.MkdirAll(stray, 0o700); err != nil {
		t.Fatal(err)
	}
	if n, err := rb.TakeOverParked(e.ctx); err != nil || n != 1 {
		t.Fatalf("TakeOverParked = %d, %v; want 1", n, err)
	}
	got, err := b.Get(e.ctx, sb.ID)
	if err != nil || got.State != store.SandboxPaused || !got.Parked {
		t.Fatalf("taken over: %+v, %v; want paused and still parked", got, err)
	}
	if _, err := os.Stat(filepath.Join(shared, parkedDir, sb.ID)); err != nil {
		t.Errorf("parked dir after a take-over: %v, want it kept", err)
	}
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("parked dir of a sandbox that is gone: %v, want it removed", err)
	}
	if n, err := rb.TakeOverParked(e.ctx); err != nil || n != 0 {
		t.Errorf("second TakeOverParked = %d, %v; want nothing", n, err)
	}
	if err := b.Kill(e.ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(shared, parkedDir, sb.ID)); !os.IsNotExist(err) {
		t.Errorf("parked dir after the kill: %v, want it gone", err)
	}
}

// TestTakeOverRefusesOthers: a node takes over only a parked, paused
// sandbox recorded as its own; anything else stays not found, and a
// damaged parked dir is an error, not a half-built sandbox.
func TestTakeOverRefusesOthers(t *testing.T) {
	t.Parallel()
	e, b, bBackend, shared, rb := twoNodes(t)
	sb := e.create(t, sandbox.CreateRequest{})
	if err := rb.TakeOver(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
		t.Errorf("take-over of a's running sandbox = %v, want not found", err)
	}
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitParked(t, e.st, sb.ID)
	if err := e.st.MoveSandbox(e.ctx, sb.ID, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, parkedDir, sb.ID, parkManifest), []byte(`{"id":"other","layers":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.Connect(e.ctx, sb.ID, time.Minute, true); err == nil || errdefs.IsNotFound(err) {
		t.Errorf("Connect with a damaged parked dir = %v, want an error", err)
	}
	if list, _ := bBackend.List(e.ctx); len(list) != 0 {
		t.Errorf("b holds %d instances after a failed take-over", len(list))
	}
}

// TestParkTooManyLayers: a sandbox on overlay.MaxLayers lowers, which no
// node could rebuild (its top becomes one more layer), is not parked: it
// waits for its own node instead of being handed over to die.
func TestParkTooManyLayers(t *testing.T) {
	t.Parallel()
	e, _, _, _, _ := twoNodes(t)
	layers := make([]string, overlay.MaxLayers)
	for i := range layers {
		layers[i] = fmt.Sprintf("%s/l%d", e.rootfs, i)
	}
	if err := e.st.PutTemplate(e.ctx, &store.Template{ID: "deep", RootfsPath: e.rootfs, Layers: layers}); err != nil {
		t.Fatal(err)
	}
	sb := e.create(t, sandbox.CreateRequest{TemplateID: "deep"})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if rec, _ := e.st.GetSandbox(e.ctx, sb.ID); rec.Parked {
		t.Fatalf("a sandbox no node can rebuild is recorded parked (the reaper hands it over; it can then only be killed)")
	}
}
