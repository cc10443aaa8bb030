package apiserver

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/netpolicy"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// FuzzNetworkJSON parses arbitrary `network` objects of a create. What is
// accepted respects the documented bounds, renders back to E2B's shape
// and parses to the same policy, and survives the store's JSON.
func FuzzNetworkJSON(f *testing.F) {
	for _, s := range []string{
		`{"allowOut":["1.2.3.4","10.0.0.0/8","Example.COM","*.example.com"],"denyOut":["0.0.0.0/0"]}`,
		`{"allowPublicTraffic":false,"maskRequestHost":"localhost:${PORT}","httpsPorts":[443,443,8443]}`,
		`{"allowOut":["::1"]}`, `{"denyOut":["example.com"]}`, `{"httpsPorts":[49983]}`, `{"httpsPorts":[0,70000]}`,
		`{"allowOut":[" 1.2.3.4/24 "]}`, `{"rules":{"a":1}}`, `{"egressProxy":{}}`, `{"maskRequestHost":"a b"}`,
	} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, body []byte, allowInternet bool) {
		var n rest.SandboxNetwork
		if json.Unmarshal(body, &n) != nil {
			return
		}
		p, err := parseNetwork(&n, allowInternet)
		if err != nil {
			if !errdefs.IsInvalidArgument(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		checkPolicy(t, p)
		again, err := parseNetwork(renderNetwork(p), allowInternet)
		if err != nil || !reflect.DeepEqual(again, p) {
			t.Fatalf("render and parse: %+v, %v; want %+v", again, err, p)
		}
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("marshal policy: %v", err)
		}
		var stored netpolicy.Policy
		if err := json.Unmarshal(b, &stored); err != nil || !reflect.DeepEqual(stored, p) {
			t.Fatalf("the store's JSON %s reads back as %+v, %v", b, stored, err)
		}
	})
}

func checkPolicy(t *testing.T, p netpolicy.Policy) {
	t.Helper()
	if len(p.AllowOut)+len(p.AllowDomains) > maxEgressEntries || len(p.DenyOut) > maxEgressEntries || len(p.HTTPSPorts) > maxHTTPSPorts {
		t.Fatalf("policy over the bounds: %+v", p)
	}
	for _, pr := range append(append([]netip.Prefix(nil), p.AllowOut...), p.DenyOut...) {
		if !pr.Addr().Is4() || pr != pr.Masked() {
			t.Fatalf("range %v is not a masked IPv4 range", pr)
		}
	}
	for _, d := range p.AllowDomains {
		if d != strings.ToLower(d) || !looksLikeDomain(d) {
			t.Fatalf("domain %q accepted", d)
		}
	}
	seen := map[int]bool{}
	for _, port := range p.HTTPSPorts {
		if port < 1 || port > 65535 || port == wire.EnvdPort || seen[port] {
			t.Fatalf("httpsPorts %v accepted", p.HTTPSPorts)
		}
		seen[port] = true
	}
	if len(p.MaskRequestHost) > 255 || strings.ContainsAny(p.MaskRequestHost, " \t\r\n/") {
		t.Fatalf("maskRequestHost %q accepted", p.MaskRequestHost)
	}
}

// FuzzCreateBody decodes arbitrary create bodies as POST /sandboxes does.
// A body is either refused as invalid or becomes a request within every
// limit the server states.
func FuzzCreateBody(f *testing.F) {
	for _, s := range []string{
		`{"templateID":"base","timeout":60,"metadata":{"a":"b"},"envVars":{"A":"1"},"cpuCount":2,"memoryMB":512}`,
		`{"templateID":"base","autoPause":true,"autoPauseMemory":false,"autoResume":{"enabled":true}}`,
		`{"templateID":"base","timeout":-1}`, `{"templateID":"base","timeout":9223372036854775807}`,
		`{"templateID":"base","envVars":{"1A":"x"}}`, `{"templateID":"","secure":true}`, `{"templateID":1}`,
		`{"templateID":"base","allow_internet_access":false,"network":{"denyOut":["10.0.0.0/8"]}}`,
		``, `null`, `[]`, `{"templateID":"base"}garbage`,
	} {
		f.Add([]byte(s), true)
	}
	s := &Server{opts: Options{MaxTimeout: time.Hour, MaxCPUCount: 4, MaxMemoryMB: 2048}}
	f.Fuzz(func(t *testing.T, body []byte, v2 bool) {
		r := httptest.NewRequest(http.MethodPost, "/v2/sandboxes", bytes.NewReader(body))
		var b rest.NewSandbox
		err := decode(r, &b, false)
		var req sandbox.CreateRequest
		if err == nil {
			req, err = s.createRequest(&b, v2)
		}
		if err != nil {
			if !errdefs.IsInvalidArgument(err) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		switch {
		case req.TemplateID == "" || len(req.TemplateID) > maxTemplateID:
			t.Fatalf("templateID %q accepted", req.TemplateID)
		case req.Timeout < 0 || req.Timeout > s.opts.MaxTimeout:
			t.Fatalf("timeout %v accepted", req.Timeout)
		case req.CPUCount < 0 || req.CPUCount > s.opts.MaxCPUCount:
			t.Fatalf("cpuCount %d accepted", req.CPUCount)
		case req.MemoryMB != 0 && (req.MemoryMB < minMemoryMB || req.MemoryMB > s.opts.MaxMemoryMB):
			t.Fatalf("memoryMB %d accepted", req.MemoryMB)
		case req.AutoPauseNoMemory && req.AutoResume:
			t.Fatal("autoPauseMemory false with autoResume accepted")
		case checkMetadata(req.Metadata) != nil || checkEnvVars(req.EnvVars) != nil:
			t.Fatalf("metadata %v or envVars %v accepted", req.Metadata, req.EnvVars)
		}
		checkPolicy(t, req.Network)
	})
}

// fuzzRoutes are the endpoints that read a body or a query. None needs an
// existing sandbox: a handler decodes and checks what it is sent before
// it asks the manager, which then answers 404 for the unknown id.
var fuzzRoutes = []string{
	"POST /sandboxes", "POST /v2/sandboxes", "POST /v3/templates", "POST /templates/tags",
	"DELETE /templates/tags", "POST /api-keys", "PATCH /api-keys/k2", "POST /events/webhooks",
	"PATCH /events/webhooks/w1", "GET /v2/sandboxes", "GET /sandboxes", "GET /events/sandboxes",
	"GET /usage", "GET /snapshots", "GET /templates", "POST /images", "GET /metrics",
	"POST /sandboxes/nosuchsandbox/timeout", "POST /sandboxes/nosuchsandbox/refreshes",
	"POST /sandboxes/nosuchsandbox/connect", "POST /v2/sandboxes/nosuchsandbox/connect",
	"POST /sandboxes/nosuchsandbox/pause", "POST /sandboxes/nosuchsandbox/resume",
	"POST /sandboxes/nosuchsandbox/snapshots", "POST /sandboxes/nosuchsandbox/fork",
	"PUT /sandboxes/nosuchsandbox/network", "GET /sandboxes/nosuchsandbox/metrics",
	"GET /sandboxes/nosuchsandbox/logs", "GET /v2/sandboxes/nosuchsandbox/logs",
	"GET /events/sandboxes/nosuchsandbox", "GET /sandboxes/metrics",
	"GET /volumes", "POST /volumes", "GET /volumes/" + fuzzVolume, "DELETE /volumes/nosuchvolume",
	"GET /volumecontent/" + fuzzVolume + "/dir", "POST /volumecontent/" + fuzzVolume + "/dir",
	"GET /volumecontent/" + fuzzVolume + "/path", "PATCH /volumecontent/" + fuzzVolume + "/path",
	"DELETE /volumecontent/" + fuzzVolume + "/path", "GET /volumecontent/" + fuzzVolume + "/file",
	"PUT /volumecontent/" + fuzzVolume + "/file",
}

// fuzzVolume is the volume of the fuzz server's volume routes; its token
// is "token-" and its id.
const fuzzVolume = "vol1"

// fuzzAuthorized says whether a request the fuzzer sent should pass the
// access check: the key (ours, sent in either header) or, on a content
// route, any bearer (a wrong one is 403 or 404, not 401).
func fuzzAuthorized(content bool, auth uint8, presented, key string) bool {
	switch {
	case content && auth%3 == 0:
		return true
	case content && auth%3 == 2:
		token, ok := strings.CutPrefix(presented, "Bearer ")
		return ok && strings.TrimSpace(token) != ""
	case content:
		return false
	case auth%3 == 1:
		return presented == key
	case auth%3 == 2:
		return strings.TrimPrefix(presented, "Bearer ") == key
	}
	return true
}

// FuzzAPIRequest sends arbitrary bodies, queries and keys through the whole
// API handler. Nothing a client sends may make a 500 (an unclassified
// error or a recovered panic); every error has E2B's shape; a request is
// authenticated exactly when it carries the key.
func FuzzAPIRequest(f *testing.F) {
	f.Add(uint8(0), "", []byte(`{"templateID":"nope"}`), uint8(0), "")
	f.Add(uint8(1), "", []byte(`{"templateID":"x","metadata":{"":""}}`), uint8(1), "e2b_0000")
	f.Add(uint8(5), "", []byte(`{"name":"k","scopes":["sandboxes:read"],"expiresAt":"2000-01-01T00:00:00Z"}`), uint8(0), "")
	f.Add(uint8(6), "", []byte(`{"name":"","scopes":["nope"]}`), uint8(2), "Bearer ")
	f.Add(uint8(9), "state=running,paused&limit=0&nextToken=%%%", []byte(nil), uint8(0), "")
	f.Add(uint8(11), "start=-1&end=99999999999999&limit=-5", []byte(nil), uint8(2), "x")
	f.Add(uint8(3), "", []byte(`{"target":"a:b","tags":["","x"]}`), uint8(0), "")
	f.Add(uint8(25), "", []byte(`{"denyOut":["10.0.0.0/8"],"allow_internet_access":false}`), uint8(0), "")
	f.Add(uint8(24), "", []byte(`{"count":1000000,"timeout":-1}`), uint8(0), "")
	f.Add(uint8(28), "cursor=-1&limit=99999&direction=up&level=loud&search=%00", []byte(nil), uint8(0), "")
	f.Add(uint8(17), "", []byte(`{"timeout":1e300}`), uint8(0), "")
	f.Add(uint8(32), "", []byte(`{"name":"a-volume"}`), uint8(0), "")
	f.Add(uint8(36), "path=/d&uid=1&gid=2&mode=493&force=true", []byte(nil), uint8(0), "")
	f.Add(uint8(41), "path=/f&force=false", []byte("content"), uint8(0), "")
	f.Add(uint8(38), "path=/f", []byte(`{"mode":420}`), uint8(2), "Bearer token-vol1")
	f.Add(uint8(35), "path=/&depth=99999999999", []byte(nil), uint8(2), "Bearer other")
	h, key := fuzzServer(f)

	f.Fuzz(func(t *testing.T, route uint8, query string, body []byte, auth uint8, presented string) {
		method, path, _ := strings.Cut(fuzzRoutes[int(route)%len(fuzzRoutes)], " ")
		r := httptest.NewRequest(method, "/", bytes.NewReader(body))
		r.URL.Path, r.URL.RawQuery = path, query
		content := strings.HasPrefix(path, "/volumecontent/")
		switch auth % 3 {
		case 0:
			r.Header.Set("X-API-KEY", key)
			if content {
				r.Header.Set("Authorization", "Bearer token-"+fuzzVolume)
			}
		case 1:
			r.Header["X-Api-Key"] = []string{presented}
		case 2:
			r.Header["Authorization"] = []string{presented}
		}
		authorized := fuzzAuthorized(content, auth, presented, key)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(ctx))
		if w.Code == http.StatusInternalServerError {
			t.Fatalf("%s %s?%s answered 500: %s", method, path, query, w.Body)
		}
		if (w.Code == http.StatusUnauthorized) == authorized {
			t.Fatalf("%s %s with key %q: status %d, authorized %v", method, path, presented, w.Code, authorized)
		}
		if w.Code >= 400 {
			var e struct {
				Code      int    `json:"code"`
				ErrorCode string `json:"error_code"`
				Message   string `json:"message"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Code != w.Code || e.Message == "" ||
				!slices.Contains(httperr.Codes[e.ErrorCode], w.Code) {
				t.Fatalf("status %d with body %q, not E2B's error shape", w.Code, w.Body)
			}
		}
	})
}

// fuzzServer is an API server over an empty store (no template, so no
// create reaches a runtime) with an admin key and a second key to patch.
func fuzzServer(f *testing.F) (http.Handler, string) {
	st := sqlitetest.Open(f)
	key, err := apikey.Generate()
	if err != nil {
		f.Fatal(err)
	}
	ctx := context.Background()
	for _, k := range []*store.APIKey{
		{ID: "k1", Name: "fuzz", Hash: apikey.Hash(key), Admin: true, CreatedAt: time.Now()},
		{ID: "k2", Name: "other", Hash: apikey.Hash(key + "2"), CreatedAt: time.Now()},
	} {
		if err := st.CreateAPIKey(ctx, k); err != nil {
			f.Fatal(err)
		}
	}
	mgr, err := lifecycle.New(lifecycle.Options{
		Store: st, Backends: map[string]runtime.Backend{"runc": nil}, DefaultBackend: "runc",
	})
	if err != nil {
		f.Fatal(err)
	}
	vols := newFakeVolumes()
	vols.vols[fuzzVolume] = &fakeVolume{
		rec:   store.Volume{ID: fuzzVolume, TeamID: store.DefaultTeam, Name: "fuzz", Token: "token-" + fuzzVolume},
		files: map[string]*fakeFile{"/": {dir: true, mode: 0o755}},
	}
	return New(Options{Store: st, Manager: newMachine(mgr, st, ""), Domain: "example.test", MaxTimeout: time.Hour,
		MaxCPUCount: 4, MaxMemoryMB: 2048, ScratchDir: f.TempDir(), Volumes: vols}), key
}
