package apiserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// recordingRelay notes which of its methods served a request, as a
// cluster's API role would relay it.
type recordingRelay struct {
	mu    sync.Mutex
	calls []string
	// sees is what Sandbox was told of the default team and another one.
	sees [2]bool
}

func (f *recordingRelay) note(w http.ResponseWriter, call string) error {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	f.mu.Unlock()
	w.WriteHeader(299)
	return nil
}

func (f *recordingRelay) Health(*http.Request) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, "Health")
	return nil
}
func (f *recordingRelay) Create(w http.ResponseWriter, _ *http.Request) error {
	return f.note(w, "Create")
}
func (f *recordingRelay) BatchMetrics(w http.ResponseWriter, _ *http.Request) error {
	return f.note(w, "BatchMetrics")
}
func (f *recordingRelay) Builder(w http.ResponseWriter, _ *http.Request) error {
	return f.note(w, "Builder")
}
func (f *recordingRelay) DeleteTemplate(w http.ResponseWriter, _ *http.Request) error {
	return f.note(w, "DeleteTemplate")
}
func (f *recordingRelay) Volume(w http.ResponseWriter, _ *http.Request) error {
	return f.note(w, "Volume")
}
func (f *recordingRelay) Sandbox(w http.ResponseWriter, _ *http.Request, id string, sees func(string) bool) error {
	f.mu.Lock()
	f.sees = [2]bool{sees(""), sees("other")}
	f.mu.Unlock()
	return f.note(w, "Sandbox "+id)
}

func (f *recordingRelay) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

// storeSandboxes is the store's view of sandboxes that a cluster's API
// role gives its REST server (Records), and no Manager: a route that acts
// on a sandbox there must be relayed.
type storeSandboxes struct{ st store.Store }

func (s storeSandboxes) List(ctx context.Context) ([]*store.Sandbox, error) {
	return s.st.ListSandboxes(ctx)
}
func (s storeSandboxes) Get(ctx context.Context, id string) (*store.Sandbox, error) {
	return s.st.GetSandbox(ctx, id)
}
func (s storeSandboxes) ListSnapshots(ctx context.Context, _, _ string) ([]*store.Snapshot, error) {
	return s.st.ListSnapshots(ctx)
}

var (
	restParam = regexp.MustCompile(`\{[^}]*\.\.\.\}`)
	oneParam  = regexp.MustCompile(`\{[^}]*\}`)
)

// nodeRoutes are the routes a cluster's API role relays, and the Relay
// method each ends in: the ones that need a sandbox's node or the
// builder. Written out here, apart from routeTable, so that a row moved
// from one side to the other fails TestRelayServesNodeRoutes.
var nodeRoutes = map[string]string{
	"GET /health":        "Health",
	"POST /sandboxes":    "Create",
	"POST /v2/sandboxes": "Create",

	"GET /sandboxes/metrics":          "BatchMetrics",
	"GET /sandboxes/{id}":             "Sandbox sb1",
	"DELETE /sandboxes/{id}":          "Sandbox sb1",
	"POST /sandboxes/{id}/timeout":    "Sandbox sb1",
	"POST /sandboxes/{id}/refreshes":  "Sandbox sb1",
	"POST /sandboxes/{id}/connect":    "Sandbox sb1",
	"POST /v2/sandboxes/{id}/connect": "Sandbox sb1",
	"POST /sandboxes/{id}/pause":      "Sandbox sb1",
	"POST /sandboxes/{id}/resume":     "Sandbox sb1",
	"GET /sandboxes/{id}/metrics":     "Sandbox sb1",
	"GET /sandboxes/{id}/logs":        "Sandbox sb1",
	"GET /v2/sandboxes/{id}/logs":     "Sandbox sb1",
	"POST /sandboxes/{id}/snapshots":  "Sandbox sb1",
	"POST /sandboxes/{id}/fork":       "Sandbox sb1",
	"PUT /sandboxes/{id}/network":     "Sandbox sb1",

	"DELETE /templates/{id}":                               "DeleteTemplate",
	"POST /v3/templates":                                   "Builder",
	"GET /templates/{templateID}/files/{hash}":             "Builder",
	"PUT /templates/{templateID}/files/{hash}":             "Builder",
	"POST /v2/templates/{templateID}/builds/{buildID}":     "Builder",
	"GET /templates/{templateID}/builds/{buildID}/status":  "Builder",
	"GET /templates/{templateID}/builds/{buildID}/logs":    "Builder",
	"POST /templates/{templateID}/builds/{buildID}/cancel": "Builder",
	"POST /templates/tags":                                 "Builder",
	"DELETE /templates/tags":                               "Builder",
	"POST /images":                                         "Builder",
	"GET /images":                                          "Builder",

	"GET /volumes":                          "Volume",
	"POST /volumes":                         "Volume",
	"GET /volumes/{volumeID}":               "Volume",
	"DELETE /volumes/{volumeID}":            "Volume",
	"GET /volumecontent/{volumeID}/dir":     "Volume",
	"POST /volumecontent/{volumeID}/dir":    "Volume",
	"GET /volumecontent/{volumeID}/path":    "Volume",
	"PATCH /volumecontent/{volumeID}/path":  "Volume",
	"DELETE /volumecontent/{volumeID}/path": "Volume",
	"GET /volumecontent/{volumeID}/file":    "Volume",
	"PUT /volumecontent/{volumeID}/file":    "Volume",
}

// keyless are the routes served without an API key: public, or checked
// by a signature of their own (an upload link, the cluster's). The
// volume content routes take a volume's token instead, and without one
// are 401 too.
var keyless = []string{
	"GET /health", "GET /openapi.yaml", "GET /dashboard/{file...}",
	"PUT /templates/{templateID}/files/{hash}", "GET /internal/layers/{key}",
}

// TestRelayServesNodeRoutes: with a Relay (a cluster's API role), every
// route a node answers (nodeRoutes) ends in its Relay method, after the
// same key check as on one machine; every other route of the one table
// is served here and never relayed.
func TestRelayServesNodeRoutes(t *testing.T) {
	st := sqlitetest.Open(t)
	secret, rec, err := apikey.Create(apikey.Spec{Name: "team"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateAPIKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	relay := &recordingRelay{}
	srv := New(Options{Store: st, Records: storeSandboxes{st: st}, Relay: relay})
	routes := srv.Routes()
	for p := range nodeRoutes {
		if !slices.Contains(routes, p) {
			t.Errorf("nodeRoutes names %q, which the server does not serve", p)
		}
	}
	for _, pattern := range routes {
		t.Run(pattern, func(t *testing.T) {
			method, path, _ := strings.Cut(pattern, " ")
			path = oneParam.ReplaceAllString(restParam.ReplaceAllString(path, "f"), "sb1")
			if !slices.Contains(keyless, pattern) {
				// Without a key, nothing is relayed: 401 here, as on a node.
				w := httptest.NewRecorder()
				srv.ServeHTTP(w, httptest.NewRequest(method, path, nil))
				if got := relay.take(); w.Code != http.StatusUnauthorized || len(got) != 0 {
					t.Errorf("without a key: %d, relayed to %v; want 401 and nothing relayed", w.Code, got)
				}
			}
			r := httptest.NewRequest(method, path, strings.NewReader("{}"))
			r.Header.Set("X-API-KEY", secret)
			if strings.HasPrefix(path, "/volumecontent/") {
				// The volume's token, which the node checks: the API
				// role relays any.
				r.Header.Set("Authorization", "Bearer some-volume-token")
			}
			w := httptest.NewRecorder()
			srv.ServeHTTP(w, r)
			got, want := relay.take(), nodeRoutes[pattern]
			if want == "" && len(got) != 0 || want != "" && !slices.Equal(got, []string{want}) {
				t.Fatalf("relayed to %v, want %q (answer %d %s)", got, want, w.Code, w.Body)
			}
			if strings.HasPrefix(want, "Sandbox") && relay.sees != [2]bool{true, false} {
				t.Errorf("Sandbox was told the key sees its team's sandboxes %v and another's %v", relay.sees[0], relay.sees[1])
			}
		})
	}
}
