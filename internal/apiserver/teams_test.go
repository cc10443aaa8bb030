package apiserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/template/builder"
)

// call makes one request and returns its status and body.
func (f *routeFixture) call(t *testing.T, key, method, path, body string) (int, string) {
	t.Helper()
	resp := do(t, f.srv, method, path, body, key)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// field returns the JSON string field name of body.
func field(body, name string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(body), &m)
	s, _ := m[name].(string)
	return s
}

// TestTeamsIsolation: what one team's key made is, to another team's key,
// exactly absent: every route that names it answers 404 with E2B's body,
// lists leave it out, and its names cannot be taken over; the public
// template stays usable by all and the admin key sees everything.
func TestTeamsIsolation(t *testing.T) {
	f := newRouteFixture(t)
	mine := f.key // team default
	other := f.addKey(t, apikey.Spec{Name: "b", Team: "beta"})
	admin := f.addKey(t, apikey.Spec{Name: "root", Admin: true})

	st, body := f.call(t, mine, "POST", "/v2/sandboxes", `{"templateID":"base","timeout":60}`)
	sb := field(body, "sandboxID")
	if st != 201 || sb == "" {
		t.Fatalf("create: %d %s", st, body)
	}
	st, body = f.call(t, mine, "POST", "/sandboxes/"+sb+"/snapshots", `{"name":"mine-snap"}`)
	snap := field(body, "snapshotID")
	if st != 201 {
		t.Fatalf("snapshot: %d %s", st, body)
	}
	st, body = f.call(t, mine, "POST", "/v3/templates", `{"name":"mine-tpl"}`)
	tpl, build := field(body, "templateID"), field(body, "buildID")
	if st != 202 {
		t.Fatalf("request build: %d %s", st, body)
	}

	hidden := []struct{ method, path, body string }{
		{"GET", "/sandboxes/" + sb, ""},
		{"DELETE", "/sandboxes/" + sb, ""},
		{"POST", "/sandboxes/" + sb + "/timeout", `{"timeout":60}`},
		{"POST", "/sandboxes/" + sb + "/refreshes", `{"duration":60}`},
		{"POST", "/sandboxes/" + sb + "/connect", `{"timeout":60}`},
		{"POST", "/v2/sandboxes/" + sb + "/connect", `{}`},
		{"POST", "/sandboxes/" + sb + "/pause", ""},
		{"POST", "/sandboxes/" + sb + "/resume", `{}`},
		{"GET", "/sandboxes/" + sb + "/metrics", ""},
		{"GET", "/sandboxes/" + sb + "/logs", ""},
		{"GET", "/v2/sandboxes/" + sb + "/logs", ""},
		{"POST", "/sandboxes/" + sb + "/snapshots", `{}`},
		{"POST", "/sandboxes/" + sb + "/fork", `{"count":1}`},
		{"PUT", "/sandboxes/" + sb + "/network", `{}`},
		{"POST", "/v2/sandboxes", `{"templateID":"` + snap + `"}`},
		{"POST", "/v2/sandboxes", `{"templateID":"mine-snap"}`},
		{"POST", "/v2/sandboxes", `{"templateID":"mine-tpl"}`},
		{"DELETE", "/templates/" + snap, ""},
		{"DELETE", "/templates/" + tpl, ""},
		{"GET", "/templates/" + tpl, ""},
		{"GET", "/templates/mine-tpl", ""},
		{"GET", "/templates/aliases/mine-tpl", ""},
		{"GET", "/templates/" + tpl + "/tags", ""},
		{"GET", "/templates/" + tpl + "/files/" + filesHash, ""},
		{"POST", "/v2/templates/" + tpl + "/builds/" + build, `{"fromTemplate":"base","steps":[]}`},
		{"GET", "/templates/" + tpl + "/builds/" + build + "/status", ""},
		{"GET", "/templates/" + tpl + "/builds/" + build + "/logs", ""},
		{"POST", "/templates/" + tpl + "/builds/" + build + "/cancel", ""},
		{"POST", "/templates/tags", `{"target":"mine-tpl:v1","tags":["x"]}`},
		{"DELETE", "/templates/tags", `{"name":"mine-tpl","tags":["x"]}`},
	}
	for _, h := range hidden {
		st, body := f.call(t, other, h.method, h.path, h.body)
		if st != 404 {
			t.Errorf("team beta: %s %s = %d %s, want 404", h.method, h.path, st, body)
			continue
		}
		checkErrorBody(t, []byte(body), 404)
	}
	for _, list := range []string{"/sandboxes", "/v2/sandboxes", "/snapshots", "/templates", "/sandboxes/metrics?sandbox_ids=" + sb} {
		st, body := f.call(t, other, "GET", list, "")
		for _, id := range []string{sb, snap, tpl, "mine-tpl"} {
			if st != 200 || strings.Contains(body, id) {
				t.Errorf("team beta: GET %s = %d %s; must not list %s", list, st, body, id)
			}
		}
	}
	if st, body := f.call(t, other, "POST", "/v3/templates", `{"name":"mine-tpl"}`); st != 409 {
		t.Errorf("team beta taking another team's name: %d %s, want 409", st, body)
	}
	st, body = f.call(t, other, "POST", "/v2/sandboxes", `{"templateID":"base","timeout":60}`)
	theirs := field(body, "sandboxID")
	if st != 201 {
		t.Fatalf("team beta from the public template: %d %s", st, body)
	}
	if st, _ := f.call(t, mine, "GET", "/sandboxes/"+theirs, ""); st != 404 {
		t.Errorf("team default reading beta's sandbox: %d, want 404", st)
	}
	for _, path := range []string{"/sandboxes/" + theirs, "/sandboxes/" + sb, "/templates/" + tpl} {
		if st, body := f.call(t, admin, "GET", path, ""); st != 200 {
			t.Errorf("admin GET %s = %d %s, want 200", path, st, body)
		}
	}
	if st, body := f.call(t, mine, "GET", "/sandboxes/"+sb, ""); st != 200 {
		t.Errorf("owner GET = %d %s", st, body)
	}
}

// TestKeyScopesAndExpiry: a scoped key does what its scopes allow and gets
// 403 for the rest; an expired key gets 401.
func TestKeyScopesAndExpiry(t *testing.T) {
	f := newRouteFixture(t)
	reader := f.addKey(t, apikey.Spec{Name: "reader", Scopes: []string{apikey.ScopeSandboxesRead}})
	builder := f.addKey(t, apikey.Spec{Name: "builder", Scopes: []string{apikey.ScopeTemplatesRead, apikey.ScopeTemplatesWrite}})
	expiring := f.addKey(t, apikey.Spec{Name: "short", TTL: 2 * time.Second})
	admin := f.addKey(t, apikey.Spec{Name: "admin", Admin: true})
	tests := []struct {
		key, method, path, body string
		status                  int
		contains                string
	}{
		{reader, "GET", "/v2/sandboxes", "", 200, "["},
		{reader, "POST", "/v2/sandboxes", `{"templateID":"base"}`, 403, "needs the scope sandboxes:write"},
		{reader, "GET", "/templates", "", 403, "templates:read"},
		{builder, "GET", "/templates", "", 200, "base"},
		{builder, "POST", "/v3/templates", `{"name":"scoped"}`, 202, "buildID"},
		{builder, "GET", "/v2/sandboxes", "", 403, "sandboxes:read"},
		{expiring, "GET", "/v2/sandboxes", "", 200, "["},
		{reader, "GET", "/metrics", "", 403, "only the admin key"},
		{admin, "GET", "/metrics", "", 200, "go_goroutines"},
	}
	for _, tc := range tests {
		st, body := f.call(t, tc.key, tc.method, tc.path, tc.body)
		if st != tc.status || !strings.Contains(body, tc.contains) {
			t.Errorf("%s %s = %d %s, want %d with %q", tc.method, tc.path, st, body, tc.status, tc.contains)
		}
	}
	time.Sleep(2100 * time.Millisecond) // past the TTL, which is long enough for the requests above on a loaded machine
	if st, body := f.call(t, expiring, "GET", "/v2/sandboxes", ""); st != 401 || !strings.Contains(body, "expired") {
		t.Errorf("expired key: %d %s, want 401", st, body)
	}
}

// TestKeysEndpoints: a team manages its own keys over /api-keys: it sees
// only them, cannot touch another team's, cannot grant scopes it lacks,
// and a revoked key stops working at once.
func TestKeysEndpoints(t *testing.T) {
	f := newRouteFixture(t)
	other := f.addKey(t, apikey.Spec{Name: "beta-key", Team: "beta"})
	limited := f.addKey(t, apikey.Spec{Name: "limited", Team: "beta", Scopes: []string{apikey.ScopeKeys, apikey.ScopeSandboxesRead}})
	st, body := f.call(t, other, "POST", "/api-keys", `{"name":"made-by-beta"}`)
	made, secret := field(body, "id"), field(body, "key")
	if st != 201 || !apikey.Valid(secret) || !strings.Contains(body, `"team":"beta"`) {
		t.Fatalf("create: %d %s", st, body)
	}
	if st, body := f.call(t, other, "GET", "/api-keys", ""); st != 200 || strings.Contains(body, `"name":"test"`) || !strings.Contains(body, "made-by-beta") {
		t.Errorf("beta's list = %d %s; want its own keys only", st, body)
	}
	if st, _ := f.call(t, f.key, "DELETE", "/api-keys/"+made, ""); st != 404 {
		t.Errorf("default team revoking beta's key = %d, want 404", st)
	}
	if st, body := f.call(t, limited, "POST", "/api-keys", `{"name":"x","scopes":["sandboxes:write"]}`); st != 403 {
		t.Errorf("granting a scope the key lacks = %d %s, want 403", st, body)
	}
	if st, body := f.call(t, limited, "POST", "/api-keys", `{"name":"y"}`); st != 201 || !strings.Contains(body, `"scopes":["keys","sandboxes:read"]`) {
		t.Errorf("a limited key's new key must inherit its scopes: %d %s", st, body)
	}
	if st, _ := f.call(t, secret, "GET", "/v2/sandboxes", ""); st != 200 {
		t.Errorf("the new key does not work: %d", st)
	}
	if st, _ := f.call(t, other, "POST", "/api-keys", `{"name":"z","team":"gamma"}`); st != 403 {
		t.Errorf("a team key making a key for another team = %d, want 403", st)
	}
	admin := f.addKey(t, apikey.Spec{Name: "root", Admin: true})
	if st, body := f.call(t, admin, "POST", "/api-keys", `{"name":"z","team":"gamma"}`); st != 201 || !strings.Contains(body, `"team":"gamma"`) {
		t.Errorf("the admin making a key for team gamma = %d %s", st, body)
	}
	if st, _ := f.call(t, other, "DELETE", "/api-keys/"+made, ""); st != 204 {
		t.Errorf("revoke = %d", st)
	}
	if st, _ := f.call(t, secret, "GET", "/v2/sandboxes", ""); st != 401 {
		t.Errorf("a revoked key still works: %d", st)
	}
}

// TestQuotasAnswer429: past a team's quota the API answers 429 with
// Retry-After and a message that says which limit; another team is apart.
func TestQuotasAnswer429(t *testing.T) {
	f := newRouteFixture(t, func(m *lifecycle.Options, b *builder.Options) {
		m.Quota = func(_ context.Context, team string) (sandbox.Quota, error) {
			if team == "beta" {
				return sandbox.Quota{}, nil
			}
			return sandbox.Quota{Sandboxes: 1}, nil
		}
		b.MaxBuilds = func(context.Context, string) (int, error) { return 1, nil }
	})
	beta := f.addKey(t, apikey.Spec{Name: "b", Team: "beta"})
	if st, body := f.call(t, f.key, "POST", "/v2/sandboxes", `{"templateID":"base"}`); st != 201 {
		t.Fatalf("first: %d %s", st, body)
	}
	resp := do(t, f.srv, "POST", "/v2/sandboxes", `{"templateID":"base"}`, f.key)
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || !strings.Contains(string(raw), "may run 1 of sandboxes") {
		t.Fatalf("second: %d %q %s, want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), raw)
	}
	checkErrorBody(t, raw, 429)
	if st, body := f.call(t, beta, "POST", "/v2/sandboxes", `{"templateID":"base"}`); st != 201 {
		t.Errorf("another team: %d %s", st, body)
	}
	var builds []string
	for _, name := range []string{"q1", "q2"} {
		_, body := f.call(t, f.key, "POST", "/v3/templates", `{"name":"`+name+`"}`)
		builds = append(builds, "/v2/templates/"+field(body, "templateID")+"/builds/"+field(body, "buildID"))
	}
	run := `{"fromTemplate":"base","steps":[{"type":"RUN","args":["sleep 1000"]}]}`
	if st, body := f.call(t, f.key, "POST", builds[0], run); st != 202 {
		t.Fatalf("first build: %d %s", st, body)
	}
	if st, body := f.call(t, f.key, "POST", builds[1], run); st != 429 || !strings.Contains(body, "template builds at once") {
		t.Errorf("second build: %d %s, want 429", st, body)
	}
}

// TestUploadsArePerTeam: one team's upload of some COPY sources is not
// "present" for another team asking with the same hash.
func TestUploadsArePerTeam(t *testing.T) {
	f := newRouteFixture(t)
	other := f.addKey(t, apikey.Spec{Name: "b", Team: "beta"})
	link := func(key, name string) (present bool, url string) {
		_, body := f.call(t, key, "POST", "/v3/templates", `{"name":"`+name+`"}`)
		st, body := f.call(t, key, "GET", "/templates/"+field(body, "templateID")+"/files/"+filesHash, "")
		if st != 201 {
			t.Fatalf("files link: %d %s", st, body)
		}
		var m struct {
			Present bool   `json:"present"`
			URL     string `json:"url"`
		}
		_ = json.Unmarshal([]byte(body), &m)
		return m.Present, m.URL
	}
	present, url := link(f.key, "up-a")
	if present {
		t.Fatal("present before any upload")
	}
	req, _ := http.NewRequest("PUT", url, strings.NewReader("sources"))
	resp, err := f.srv.Client().Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("upload: %v %v", resp, err)
	}
	resp.Body.Close()
	if present, _ := link(f.key, "up-a2"); !present {
		t.Error("the team's own upload is not present for its next template")
	}
	if present, _ := link(other, "up-b"); present {
		t.Error("another team sees the upload as present")
	}
}
