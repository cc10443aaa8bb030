package apiserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/admission"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
	"github.com/warren-sandbox/warren/internal/telemetry"
	"github.com/warren-sandbox/warren/internal/template/builder"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// routeCase is one request of TestEveryRoute. Cases run in order and
// share state: a case's path and body may name values earlier cases saved
// ({sb}, {snap}, {tpl}, {build}, {upload}).
type routeCase struct {
	route  string // the pattern the request should reach, as registered
	name   string
	method string
	path   string
	body   string
	noKey  bool
	admin  bool // sent with an admin key instead of the team's
	// bearer, when set, is sent as Authorization: Bearer instead of the
	// key (a volume's token, for the content routes).
	bearer string
	status int
	// contains is part of the error message (for failures) or of the body.
	contains string
	// poll repeats the request (for up to 10 s) until it answers as expected.
	poll bool
	// save records values from a successful answer for later cases.
	save func(vars map[string]string, body []byte)
	// cluster sends the request as the cluster's API or a node would
	// (signed, the key by its hash), with "signed", or signed wrongly:
	// "other-secret", "stale".
	cluster string
}

// TestEveryRoute drives every route of the REST API in-process, on the
// sandbox manager over the fake runtime and the in-memory store, with input
// that succeeds and input that fails: status codes, E2B's error body on
// failures. TestRouteTableIsComplete keeps this table in step with the mux.
func TestEveryRoute(t *testing.T) {
	f := newRouteFixture(t)
	admin := f.addKey(t, apikey.Spec{Name: "admin", Admin: true})
	vars := map[string]string{}
	doc := newDocCheck(t)
	undocumented := map[string]bool{"/": true}
	for _, p := range removedEndpoints {
		undocumented[p] = true
	}
	for _, p := range registeredPatterns(t) {
		undocumented[p] = undocumented[p] || internalRoute(p)
	}
	for _, tc := range routeCases() {
		ok := t.Run(tc.route+"/"+tc.name, func(t *testing.T) {
			path, body := expand(tc.path, vars), expand(tc.body, vars)
			key := f.key
			switch {
			case tc.noKey:
				key = ""
			case tc.admin:
				key = admin
			}
			want := expand(tc.contains, vars)
			var raw []byte
			var status int
			deadline := time.Now().Add(10 * time.Second)
			var resp *http.Response
			for {
				switch {
				case tc.cluster != "":
					resp = doSigned(t, f.srv, tc.method, path, body, key, tc.cluster)
				case tc.bearer != "":
					resp = doBearer(t, f.srv, tc.method, path, body, expand(tc.bearer, vars))
				default:
					resp = do(t, f.srv, tc.method, path, body, key)
				}
				raw, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
				if !tc.poll || status == tc.status && strings.Contains(string(raw), want) || time.Now().After(deadline) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if status != tc.status {
				t.Fatalf("%s %s = %d, want %d; body %s", tc.method, path, status, tc.status, raw)
			}
			if !undocumented[tc.route] {
				doc.check(t, tc.method, f.srv.URL+path, body, resp, raw, tc.status < 400)
			}
			if !strings.Contains(string(raw), want) {
				t.Fatalf("body %s does not contain %q", raw, want)
			}
			if tc.status >= 400 {
				checkErrorBody(t, raw, tc.status)
				return
			}
			if tc.save != nil {
				tc.save(vars, raw)
			}
		})
		if !ok {
			t.FailNow() // later cases depend on this one's state
		}
	}
}

// TestRouteTableIsComplete: every pattern the server registers has a case
// that succeeds and one that fails.
func TestRouteTableIsComplete(t *testing.T) {
	t.Parallel()
	good, bad := map[string]bool{}, map[string]bool{}
	for _, tc := range routeCases() {
		if tc.status < 400 {
			good[tc.route] = true
		} else {
			bad[tc.route] = true
		}
	}
	// Removed endpoints and the catch-all only fail; health fails only
	// before the server is ready (TestHealthWaitsForReady); the API's
	// description never fails.
	onlyFail := map[string]bool{"/": true}
	for _, p := range removedEndpoints {
		onlyFail[p] = true
	}
	for _, p := range registeredPatterns(t) {
		if !bad[p] && p != "GET /health" && p != "GET /openapi.yaml" {
			t.Errorf("route %q has no failing case in routeCases", p)
		}
		if !good[p] && !onlyFail[p] {
			t.Errorf("route %q has no succeeding case in routeCases", p)
		}
	}
}

// registeredPatterns is every pattern the server registers: its routes,
// the removed endpoints and the catch-all.
func registeredPatterns(t *testing.T) []string {
	t.Helper()
	out := slices.Clone(Starting().(*Server).patterns)
	if len(out) < 30 {
		t.Fatalf("found only %d route patterns; has registration moved?", len(out))
	}
	return append(append(out, removedEndpoints...), "/")
}

// checkErrorBody fails unless raw is E2B's error body for status: code
// equal to it, a message, and an error_code that httperr.Codes lists
// for that status.
func checkErrorBody(t *testing.T, raw []byte, status int) errorBody {
	t.Helper()
	var eb errorBody
	if err := json.Unmarshal(raw, &eb); err != nil || eb.Code == nil || eb.Message == nil || eb.ErrorCode == nil {
		t.Fatalf("body %q is not E2B's {code, error_code, message}", raw)
	}
	if *eb.Code != status {
		t.Fatalf("body code %d, want %d", *eb.Code, status)
	}
	if !slices.Contains(httperr.Codes[*eb.ErrorCode], status) {
		t.Fatalf("body %s: error_code %q is not one of httperr.Codes for %d", raw, *eb.ErrorCode, status)
	}
	return eb
}

func expand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

// saveField returns a save func that keeps the JSON string field of the
// answer under name.
func saveField(name, field string) func(map[string]string, []byte) {
	return func(vars map[string]string, body []byte) {
		var m map[string]any
		_ = json.Unmarshal(body, &m)
		if s, ok := m[field].(string); ok {
			vars[name] = s
		}
	}
}

type routeFixture struct {
	srv *httptest.Server
	key string
	st  store.Store
	// metrics is the registry behind /metrics, told of every request,
	// lifecycle operation and build.
	metrics *telemetry.Registry
	images  *fakeImages
}

// addKey stores a key as spec describes it and returns its secret.
func (f *routeFixture) addKey(t *testing.T, spec apikey.Spec) string {
	t.Helper()
	secret, rec, err := apikey.Create(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.CreateAPIKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return secret
}

// newRouteFixture is a ready server over the fake backend (a stand-in envd
// accepts /init) with a builder whose RUN steps wait until cancelled.
func newRouteFixture(t *testing.T, adjust ...func(*lifecycle.Options, *builder.Options)) *routeFixture {
	t.Helper()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	envd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(envd.Close)
	ap := netip.MustParseAddrPort(envd.Listener.Addr().String())
	b := fake.New("fake")
	b.UseIP(ap.Addr())
	st := sqlitetest.Open(t)
	ctx := context.Background()
	key, err := apikey.Generate()
	check(err)
	check(st.CreateAPIKey(ctx, &store.APIKey{ID: "k1", Name: "test", Hash: apikey.Hash(key), CreatedAt: time.Now()}))
	dir := t.TempDir()
	rootfs := filepath.Join(dir, "rootfs")
	check(os.MkdirAll(filepath.Join(rootfs, "etc"), 0o755))
	check(os.MkdirAll(filepath.Join(rootfs, "home", "user"), 0o755))
	check(os.WriteFile(filepath.Join(rootfs, "etc", "passwd"), []byte("root:x:0:0::/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n"), 0o644))
	check(os.WriteFile(filepath.Join(rootfs, "etc", "group"), []byte("root:x:0:\nuser:x:1000:\n"), 0o644))
	check(st.PutTemplate(ctx, &store.Template{ID: "base", Aliases: []string{"base"}, RootfsPath: rootfs, Public: true}))
	envdBin := filepath.Join(dir, "envd")
	check(os.WriteFile(envdBin, nil, 0o755))
	// Two nodes for GET /nodes: one beating, one silent for an hour.
	check(st.PutNode(ctx, &store.Node{Name: "node-live", AdvertiseURL: "http://10.0.0.7:3000", CPUs: 8, HeartbeatAt: time.Now()}))
	check(st.PutNode(ctx, &store.Node{Name: "node-gone", AdvertiseURL: "http://10.0.0.8:3000", HeartbeatAt: time.Now().Add(-time.Hour)}))
	check(st.PutNode(ctx, &store.Node{Name: "node-retired", AdvertiseURL: "http://10.0.0.9:3000", HeartbeatAt: time.Now().Add(-time.Hour)}))
	mopts := lifecycle.Options{
		Store: st, Backends: map[string]runtime.Backend{"fake": b}, DefaultBackend: "fake",
		EnvdPath: envdBin, EnvdPort: ap.Port(), DefaultCPUCount: 1, DefaultMemoryMB: 128,
		SnapshotDir: filepath.Join(dir, "snapshots"),
	}
	images := newFakeImages()
	bopts := builder.Options{
		Store: st, Runner: blockingRunner{}, Images: images,
		FilesDir: filepath.Join(dir, "files"), WorkDir: filepath.Join(dir, "builds"),
		BuiltIn: []string{"base"}, DefaultDiskMB: 1024,
	}
	metrics := telemetry.New()
	mopts.ObserveOp, bopts.ObserveBuild = metrics.ObserveOp, metrics.ObserveBuild
	// Events are recorded; nothing runs to deliver them, so deliveries
	// stay pending for the cases to see.
	evs := events.New(events.Options{Store: st})
	mopts.Events = evs
	for _, a := range adjust {
		a(&mopts, &bopts)
	}
	mgr, err := lifecycle.New(mopts)
	check(err)
	t.Cleanup(func() { _ = mgr.Shutdown(context.Background()) })
	layers, err := layer.NewStore(filepath.Join(dir, "layers"))
	check(err)
	bopts.Layers = layers
	bld, err := builder.New(bopts)
	check(err)
	t.Cleanup(bld.Shutdown)
	m := newMachine(mgr, st, mopts.SnapshotDir)
	s := New(Options{
		Store: st, Manager: m, Domain: "example.test", MaxTimeout: time.Hour,
		MaxCPUCount: 4, MaxMemoryMB: 2048,
		Builder: bld, Images: images, ScratchDir: t.TempDir(),
		Metrics: metrics.Handler(), ObserveRequest: metrics.ObserveRequest,
		Events: evs, Cluster: clusterSigner(t, testClusterSecret, time.Now), Volumes: newFakeVolumes(),
		Starts: func() admission.Stats {
			return admission.Stats{Running: 1, Waiting: 3, Slots: 2, WaitingByTeam: map[string]int{"default": 2, "other": 1}}
		},
		Layers: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, "layer "+r.PathValue("key"))
		}),
	})
	metrics.RegisterSandboxes(m.Census, 10)
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &routeFixture{srv: srv, key: key, st: st, metrics: metrics, images: images}
}

// blockingRunner holds every RUN step until its build is cancelled.
type blockingRunner struct{}

func (blockingRunner) RunBuildStep(ctx context.Context, _ builder.RunStep) (int, error) {
	<-ctx.Done()
	return -1, ctx.Err()
}

// testClusterSecret is the route fixture's cluster secret.
const testClusterSecret = "test-cluster-secret-0123456789abcdef"

func clusterSigner(t *testing.T, secret string, now func() time.Time) *clusterauth.Signer {
	t.Helper()
	s, err := clusterauth.New(secret, now)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// doSigned sends a request as the API role forwards one: no key, its
// hash under the cluster's signature; how is "signed", or "other-secret"
// or "stale" for a signature the server must refuse.
func doSigned(t *testing.T, srv *httptest.Server, method, path, body, key, how string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	secret, now := testClusterSecret, time.Now
	switch how {
	case "signed":
	case "other-secret":
		secret = strings.Repeat("x", clusterauth.MinSecretLen)
	case "stale":
		now = func() time.Time { return time.Now().Add(-clusterauth.MaxSkew - time.Minute) }
	default:
		t.Fatalf("doSigned: unknown %q", how)
	}
	hash := ""
	if key != "" {
		hash = apikey.Hash(key)
	}
	clusterSigner(t, secret, now).Sign(req, hash)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}
