package lifecycle

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/snapshot"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// stubEnvd stands in for every sandbox's envd: it records /init calls.
type stubEnvd struct {
	mu     sync.Mutex
	inits  []initBody
	fail   bool
	checks []string // X-Access-Token of each POST /memory/check
}

func (e *stubEnvd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if r.URL.Path == "/memory/check" && r.Method == http.MethodPost {
		e.checks = append(e.checks, r.Header.Get("X-Access-Token"))
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if e.fail || r.URL.Path != "/init" {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	var b initBody
	_ = json.NewDecoder(r.Body).Decode(&b)
	e.inits = append(e.inits, b)
	w.WriteHeader(http.StatusNoContent)
}

func (e *stubEnvd) calls() []initBody {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]initBody(nil), e.inits...)
}

type env struct {
	m      *Manager
	snaps  *snapshot.Room // registered on m, as the server does
	b      *fake.Backend
	st     store.Store
	envd   *stubEnvd
	ctx    context.Context
	rootfs string
}

func newEnv(t *testing.T) *env { return newEnvWith(t, nil) }

// newEnvWith is newEnv with opts adjusted by adjust before the manager is made.
func newEnvWith(t *testing.T, adjust func(*Options)) *env {
	t.Helper()
	envd := &stubEnvd{}
	srv := httptest.NewServer(envd)
	t.Cleanup(srv.Close)
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	b := fake.New("fake")
	b.UseIP(ap.Addr())
	st := sqlitetest.Open(t)
	ctx := context.Background()
	rootfs := t.TempDir()
	if err := st.PutTemplate(ctx, &store.Template{ID: "base", Aliases: []string{"py"}, RootfsPath: rootfs}); err != nil {
		t.Fatal(err)
	}
	opts := Options{
		Store: st, Backends: map[string]runtime.Backend{"fake": b}, DefaultBackend: "fake",
		EnvdPath: envdPath(t), EnvdPort: ap.Port(), EnvdReadyTimeout: 500 * time.Millisecond,
		StartReadyTimeout: 300 * time.Millisecond,
		DefaultCPUCount:   1, DefaultMemoryMB: 128,
		SnapshotDir: filepath.Join(t.TempDir(), "snapshots"),
	}
	if adjust != nil {
		adjust(&opts)
	}
	m, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	shutdownAtEnd(t, m)
	snaps := snapshot.New(m, snapshot.Options{Store: opts.Store, Dir: opts.SnapshotDir})
	m.SetSnapshots(snaps)
	// A template whose start command "serves" on the stand-in's port, and
	// one whose port never opens.
	for id, port := range map[string]int{"serving": int(ap.Port()), "silent": closedPort(t)} {
		if err := st.PutTemplate(ctx, &store.Template{ID: id, RootfsPath: rootfs, StartCmd: "serve", ReadyPort: port}); err != nil {
			t.Fatal(err)
		}
	}
	return &env{m: m, snaps: snaps, b: b, st: st, envd: envd, ctx: ctx, rootfs: rootfs}
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// envdPath returns a file to stand for envd's binary in bind specs.
func envdPath(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "envd")
	if err := os.WriteFile(p, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func (e *env) create(t *testing.T, req sandbox.CreateRequest) *store.Sandbox {
	t.Helper()
	if req.TemplateID == "" {
		req.TemplateID = "base"
	}
	if req.Timeout == 0 {
		req.Timeout = time.Minute
	}
	sb, err := e.m.Create(e.ctx, req)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return sb
}

func (e *env) instances(t *testing.T) int {
	t.Helper()
	list, err := e.b.List(e.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return len(list)
}

func TestCreateInitialisesEnvd(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{TemplateID: "py", Secure: true, EnvVars: map[string]string{"A": "1"}, Metadata: map[string]string{"k": "v"}})
	if len(sb.ID) != 20 || sb.EnvdAccessToken == "" || sb.TemplateID != "base" || sb.Alias != "py" || sb.CPUCount != 1 {
		t.Fatalf("record = %+v", sb)
	}
	inits := e.envd.calls()
	if len(inits) != 1 || inits[0].AccessToken != sb.EnvdAccessToken || inits[0].EnvVars["A"] != "1" || inits[0].DefaultUser != "user" {
		t.Fatalf("/init calls = %+v", inits)
	}
	got, err := e.m.Get(e.ctx, sb.ID)
	if err != nil || got.Metadata["k"] != "v" {
		t.Fatalf("Get = %+v, %v", got, err)
	}
	got.Metadata["k"] = "changed"
	if again, _ := e.m.Get(e.ctx, sb.ID); again.Metadata["k"] != "v" {
		t.Fatal("Get must return a copy")
	}
	if _, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "serving", Timeout: time.Minute}); err != nil {
		t.Fatalf("a template whose ready port answers: %v", err)
	}
	insecure := e.create(t, sandbox.CreateRequest{})
	if insecure.EnvdAccessToken != "" {
		t.Fatal("secure:false must not mint a token")
	}
}

func TestCreateFailuresLeaveNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(e *env)
		req   sandbox.CreateRequest
		class error
	}{
		{"unknown template", func(*env) {}, sandbox.CreateRequest{TemplateID: "nope"}, errdefs.ErrNotFound},
		{"backend fails", func(e *env) { e.b.FailNext(fake.OpCreate, "", errdefs.ErrResourceExhausted) }, sandbox.CreateRequest{}, errdefs.ErrResourceExhausted},
		{"envd never answers", func(e *env) { e.envd.fail = true }, sandbox.CreateRequest{}, errdefs.ErrUnavailable},
		{"start command never listens", func(*env) {}, sandbox.CreateRequest{TemplateID: "silent"}, errdefs.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			tc.setup(e)
			if tc.req.TemplateID == "" {
				tc.req.TemplateID = "base"
			}
			_, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: tc.req.TemplateID, Timeout: time.Minute})
			if !errors.Is(err, tc.class) {
				t.Fatalf("err = %v, want class %v", err, tc.class)
			}
			if n := e.instances(t); n != 0 {
				t.Fatalf("%d instances left", n)
			}
			if list, _ := e.st.ListSandboxes(e.ctx); len(list) != 0 {
				t.Fatalf("%d records left", len(list))
			}
		})
	}
}

func TestTimeouts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	short := e.create(t, sandbox.CreateRequest{Timeout: 50 * time.Millisecond})
	kept := e.create(t, sandbox.CreateRequest{Timeout: 50 * time.Millisecond})
	if err := e.m.SetTimeout(e.ctx, kept.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	testutil.Eventually(t, 5*time.Second, func() error {
		if _, err := e.m.Get(e.ctx, short.ID); !errdefs.IsNotFound(err) {
			return errors.New("still there")
		}
		return nil
	})
	if _, err := e.b.Inspect(e.ctx, short.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("expired sandbox not destroyed: %v", err)
	}
	before, _ := e.m.Get(e.ctx, kept.ID)
	if _, resumed, err := e.m.Connect(e.ctx, kept.ID, time.Second, true); err != nil || resumed {
		t.Fatalf("Connect = %v, %v", resumed, err)
	}
	if after, _ := e.m.Get(e.ctx, kept.ID); !after.EndAt.Equal(before.EndAt) {
		t.Fatal("connect must never shorten a running sandbox's life")
	}
}

func TestPauseResumeAndAutoPause(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	if err := e.m.Pause(e.ctx, sb.ID, true); !errdefs.IsConflict(err) {
		t.Fatalf("second pause = %v, want a conflict", err)
	}
	if _, err := e.m.Resolve(e.ctx, sb.ID); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("routing to a paused sandbox = %v, want unavailable", err)
	}
	got, resumed, err := e.m.Connect(e.ctx, sb.ID, time.Minute, true)
	if err != nil || !resumed || got.State != store.SandboxRunning {
		t.Fatalf("Connect = %+v, %v, %v", got, resumed, err)
	}

	auto := e.create(t, sandbox.CreateRequest{Timeout: 50 * time.Millisecond, AutoPause: true, AutoResume: true})
	testutil.Eventually(t, 5*time.Second, func() error {
		if cur, _ := e.m.Get(e.ctx, auto.ID); cur == nil || cur.State != store.SandboxPaused {
			return errors.New("not paused yet")
		}
		return nil
	})
	if _, err := e.m.Resolve(e.ctx, auto.ID); err != nil {
		t.Fatalf("traffic must resume an autoResume sandbox: %v", err)
	}
	if cur, _ := e.m.Get(e.ctx, auto.ID); cur.State != store.SandboxRunning {
		t.Fatalf("state after auto-resume = %s", cur.State)
	}
}

func TestKillCutsConnections(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	sb := e.create(t, sandbox.CreateRequest{})
	target, err := e.m.Resolve(e.ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer b.Close()
	target.Track(a)
	if err := e.m.Kill(e.ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Write([]byte("x")); err == nil {
		t.Fatal("a tracked connection must be closed by kill")
	}
	if err := e.m.Kill(e.ctx, sb.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("second kill = %v, want not found", err)
	}
	if n := e.instances(t); n != 0 {
		t.Fatalf("%d instances left after kill", n)
	}
}

func TestReconcile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	live := e.create(t, sandbox.CreateRequest{})
	dead := e.create(t, sandbox.CreateRequest{})
	if err := e.b.Crash(dead.ID); err != nil {
		t.Fatal(err)
	}
	stray, err := e.b.Create(e.ctx, runtime.Spec{ID: "stray0000000000000000", Rootfs: e.rootfs, Init: runtime.Process{Args: []string{"/envd"}}})
	if err != nil {
		t.Fatal(err)
	}
	// A new manager over the same store and backend, as after a restart.
	m2, err := New(e.m.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer m2.Shutdown(context.Background())
	if err := m2.Reconcile(e.ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Get(e.ctx, live.ID); err != nil {
		t.Fatalf("live sandbox not re-adopted: %v", err)
	}
	if _, err := m2.Get(e.ctx, dead.ID); !errdefs.IsNotFound(err) {
		t.Fatalf("dead sandbox adopted: %v", err)
	}
	for _, id := range []string{dead.ID, stray.ID} {
		if _, err := e.b.Inspect(e.ctx, id); !errdefs.IsNotFound(err) {
			t.Fatalf("%s not destroyed: %v", id, err)
		}
	}
}

// TestSandboxEnv: every process learns it runs in a sandbox and which one,
// as E2B sets it; the request's envVars win over those names.
func TestSandboxEnv(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tc := range []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{"defaults", nil, map[string]string{"E2B_SANDBOX": "true"}},
		{"request wins", map[string]string{"E2B_SANDBOX": "mine", "A": "1"}, map[string]string{"E2B_SANDBOX": "mine", "A": "1"}},
	} {
		sb := e.create(t, sandbox.CreateRequest{EnvVars: tc.env, TeamID: "acme", AnyTeam: true})
		calls := e.envd.calls()
		got := calls[len(calls)-1].EnvVars
		tc.want["E2B_SANDBOX_ID"], tc.want["E2B_TEMPLATE_ID"], tc.want["E2B_TEAM_ID"] = sb.ID, sb.TemplateID, "acme"
		if !maps.Equal(got, tc.want) || sb.TemplateID == "" {
			t.Errorf("%s: envd got %v, want %v", tc.name, got, tc.want)
		}
		if _, ok := sb.EnvVars["E2B_SANDBOX_ID"]; ok {
			t.Errorf("%s: the record's envVars gained E2B's: %v", tc.name, sb.EnvVars)
		}
	}
}

// shutdownAtEnd shuts m down when the test ends and fails it if the
// manager's background work does not finish.
func shutdownAtEnd(t testing.TB, m *Manager) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := m.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
}

// machine is the manager with its snapshot room, as internal/server
// joins them for the rooms that use both (retention).
type machine struct {
	*Manager
	*snapshot.Room
}
