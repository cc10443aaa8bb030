package apiserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// volumeFixture is a server whose volumes are a fakeVolumes, with keys of
// the default team, another team, the admin and a read-only key, and
// volumes made beforehand: a (the team's), b (the other team's), busy
// (mounted by sb1) and spare.
type volumeFixture struct {
	srv  *httptest.Server
	vols *fakeVolumes
	keys map[string]string
	vars map[string]string
}

func newVolumeFixture(t *testing.T, adjust ...func(*Options)) *volumeFixture {
	t.Helper()
	st := sqlitetest.Open(t)
	f := &volumeFixture{vols: newFakeVolumes(), keys: map[string]string{}, vars: map[string]string{}}
	f.vols.limit = 64
	for name, spec := range map[string]apikey.Spec{
		"key": {Name: "team"}, "other": {Name: "other", Team: "other"}, "admin": {Name: "admin", Admin: true},
		"read": {Name: "read", Scopes: []string{apikey.ScopeSandboxesRead}},
	} {
		secret, rec, err := apikey.Create(spec)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.CreateAPIKey(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		f.keys[name] = secret
	}
	for _, v := range []struct{ name, team string }{
		{"a", store.DefaultTeam}, {"b", "other"}, {"busy", store.DefaultTeam}, {"spare", store.DefaultTeam},
	} {
		rec, err := f.vols.Create(context.Background(), v.team, "vol-"+v.name)
		if err != nil {
			t.Fatal(err)
		}
		f.vars[v.name] = rec.ID
	}
	f.vols.mounts[f.vars["busy"]] = []string{"sb1"}
	opts := Options{Store: st, Volumes: f.vols}
	for _, a := range adjust {
		a(&opts)
	}
	f.srv = httptest.NewServer(New(opts))
	t.Cleanup(f.srv.Close)
	return f
}

// send makes a request as auth says: a key's name ("key", "other",
// "admin", "read"), "bearer:" and a token (with {vars}), or "" for none.
func (f *volumeFixture) send(t *testing.T, method, path, auth string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+expand(path, f.vars), body)
	if err != nil {
		t.Fatal(err)
	}
	if token, ok := strings.CutPrefix(auth, "bearer:"); ok {
		req.Header.Set("Authorization", "Bearer "+expand(token, f.vars))
	} else if auth != "" {
		req.Header.Set("X-API-KEY", f.keys[auth])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

type volumeCase struct {
	name, method, path, auth, body string
	status                         int
	contains, lacks                string
}

// The team's own volume's token, and its content routes' prefix.
const (
	tokA = "bearer:token-{a}"
	dirA = "/volumecontent/{a}/dir"
	pthA = "/volumecontent/{a}/path"
	filA = "/volumecontent/{a}/file"
)

func volumeControlCases() []volumeCase {
	return []volumeCase{
		{"create", "POST", "/volumes", "key", `{"name":"new-vol"}`, 201, `"token":"token-`, ""},
		{"create: name taken", "POST", "/volumes", "key", `{"name":"new-vol"}`, 409, "new-vol", ""},
		{"create: same name, other team", "POST", "/volumes", "other", `{"name":"new-vol"}`, 201, `"name":"new-vol"`, ""},
		{"create: bad name", "POST", "/volumes", "key", `{"name":"a b"}`, 400, "name must be", ""},
		{"create: empty name", "POST", "/volumes", "key", `{"name":""}`, 400, "name must be", ""},
		{"create: name too long", "POST", "/volumes", "key", `{"name":"` + strings.Repeat("x", 64) + `"}`, 400, "name must be", ""},
		{"create: no body", "POST", "/volumes", "key", ``, 400, "body is required", ""},
		{"create: not JSON", "POST", "/volumes", "key", `{`, 400, "malformed JSON", ""},
		{"create: read-only key", "POST", "/volumes", "read", `{"name":"x"}`, 403, "sandboxes:write", ""},
		{"create: no key", "POST", "/volumes", "", `{"name":"x"}`, 401, "API key", ""},
		{"create: a volume token is no key", "POST", "/volumes", tokA, `{"name":"x"}`, 401, "invalid API key", ""},
		{"list", "GET", "/volumes", "key", ``, 200, `"name":"vol-a"`, `"vol-b"`},
		{"list: warren's fields", "GET", "/volumes", "read", ``, 200, `"sandboxes":["sb1"]`, ""},
		{"list: admin sees every team", "GET", "/volumes", "admin", ``, 200, `"name":"vol-b"`, ""},
		{"list: no key", "GET", "/volumes", "", ``, 401, "API key", ""},
		{"get", "GET", "/volumes/{a}", "key", ``, 200, `"token":"token-{a}"`, ""},
		{"get: size and use", "GET", "/volumes/{a}", "key", ``, 200, `"sizeMB":1,"token":"token-{a}","usedBytes":0`, ""},
		{"get: another team's", "GET", "/volumes/{b}", "key", ``, 404, "not found", "token-"},
		{"get: unknown", "GET", "/volumes/" + unknownID, "key", ``, 404, unknownID, ""},
		{"get: admin", "GET", "/volumes/{b}", "admin", ``, 200, `"token":"token-{b}"`, ""},
		{"delete: mounted", "DELETE", "/volumes/{busy}", "key", ``, 409, "sb1", ""},
		{"delete: another team's", "DELETE", "/volumes/{b}", "key", ``, 404, "not found", ""},
		{"delete: read-only key", "DELETE", "/volumes/{spare}", "read", ``, 403, "sandboxes:write", ""},
		{"delete", "DELETE", "/volumes/{spare}", "key", ``, 204, "", ""},
		{"delete: gone", "DELETE", "/volumes/{spare}", "key", ``, 404, "not found", ""},
		{"get: still theirs", "GET", "/volumes/{b}", "other", ``, 200, `"name":"vol-b"`, ""},
	}
}

func volumeAuthCases() []volumeCase {
	return []volumeCase{
		{"no token", "GET", dirA + "?path=/", "", ``, 401, "missing volume token", ""},
		{"an API key, not a token", "GET", dirA + "?path=/", "key", ``, 401, "missing volume token", ""},
		{"an API key as the bearer", "GET", dirA + "?path=/", "bearer:" + "e2b_0000", ``, 403, "not the volume's", ""},
		{"another volume's token", "GET", dirA + "?path=/", "bearer:token-{b}", ``, 403, "not the volume's", ""},
		{"another volume's token, write", "PUT", filA + "?path=/x", "bearer:token-{busy}", `data`, 403, "not the volume's", ""},
		{"empty bearer", "GET", dirA + "?path=/", "bearer:", ``, 401, "missing volume token", ""},
		{"unknown volume", "GET", "/volumecontent/" + unknownID + "/dir?path=/", tokA, ``, 404, unknownID, ""},
	}
}

func volumeContentCases() []volumeCase {
	return []volumeCase{
		{"mkdir", "POST", dirA + "?path=/d", tokA, ``, 201, `"type":"directory"`, ""},
		{"mkdir: exists", "POST", dirA + "?path=/d", tokA, ``, 409, "exists", ""},
		{"mkdir: exists, force", "POST", dirA + "?path=/d&force=true", tokA, ``, 201, `"path":"/d"`, ""},
		{"mkdir: no parent", "POST", dirA + "?path=/x/y", tokA, ``, 404, "/x", ""},
		{"mkdir: parents and owner", "POST", dirA + "?path=/x/y&force=true&uid=1000&gid=4294967295&mode=448", tokA, ``, 201, `"gid":4294967295,"mode":448`, ""},
		{"mkdir: negative uid", "POST", dirA + "?path=/z&uid=-1", tokA, ``, 400, "uid must be a whole number", ""},
		{"mkdir: uid past uint32", "POST", dirA + "?path=/z&uid=4294967296", tokA, ``, 400, "uid must be", ""},
		{"mkdir: hex gid", "POST", dirA + "?path=/z&gid=0x10", tokA, ``, 400, "gid must be", ""},
		{"mkdir: empty mode", "POST", dirA + "?path=/z&mode=", tokA, ``, 400, "mode must be", ""},
		{"mkdir: mode past 07777", "POST", dirA + "?path=/z&mode=4096", tokA, ``, 400, "permission bits", ""},
		{"mkdir: force yes", "POST", dirA + "?path=/z&force=yes", tokA, ``, 400, "force must be true or false", ""},
		{"mkdir: no path", "POST", dirA, tokA, ``, 400, "path is required", ""},
		{"mkdir: path twice", "POST", dirA + "?path=/a&path=/b", tokA, ``, 400, "send path once", ""},
		{"write", "PUT", filA + "?path=/d/f.txt", tokA, `hello`, 201, `"size":5`, ""},
		{"write: exists", "PUT", filA + "?path=/d/f.txt", tokA, `again`, 409, "exists", ""},
		{"write: force", "PUT", filA + "?path=/d/f.txt&force=true&mode=384", tokA, `hello, volume`, 201, `"mode":384`, ""},
		{"write: empty", "PUT", filA + "?path=/empty", tokA, ``, 201, `"size":0`, ""},
		{"write: no parent", "PUT", filA + "?path=/nope/f", tokA, `x`, 404, "/nope", ""},
		{"write: a directory", "PUT", filA + "?path=/d&force=true", tokA, `x`, 409, "directory", ""},
		{"write: full", "PUT", filA + "?path=/big", tokA, strings.Repeat("x", 65), 507, "full", ""},
		{"write: escape", "PUT", filA + "?path=/../x", tokA, `x`, 400, "leaves the volume", ""},
		{"write: bad uid", "PUT", filA + "?path=/u&uid=1.5", tokA, `x`, 400, "uid must be", ""},
		{"read", "GET", filA + "?path=/d/f.txt", tokA, ``, 200, "hello, volume", ""},
		{"read: a directory", "GET", filA + "?path=/d", tokA, ``, 400, "is a directory", ""},
		{"read: missing", "GET", filA + "?path=/d/none", tokA, ``, 404, "/d/none", ""},
		{"read: no path", "GET", filA + "?path=", tokA, ``, 400, "path is required", ""},
		{"stat", "GET", pthA + "?path=/d/f.txt", tokA, ``, 200, `"type":"file"`, ""},
		{"stat: relative path", "GET", pthA + "?path=d", tokA, ``, 200, `"path":"/d"`, ""},
		{"stat: missing", "GET", pthA + "?path=/none", tokA, ``, 404, "/none", ""},
		{"stat: escape", "GET", pthA + "?path=../etc/passwd", tokA, ``, 400, "leaves the volume", ""},
		{"update", "PATCH", pthA + "?path=/d/f.txt", tokA, `{"uid":7,"gid":8,"mode":256}`, 200, `"gid":8,"mode":256`, ""},
		{"update: nothing", "PATCH", pthA + "?path=/d/f.txt", tokA, `{}`, 200, `"uid":7`, ""},
		{"update: no body", "PATCH", pthA + "?path=/d/f.txt", tokA, ``, 400, "body is required", ""},
		{"update: missing", "PATCH", pthA + "?path=/none", tokA, `{"mode":256}`, 404, "/none", ""},
		{"update: mode past 07777", "PATCH", pthA + "?path=/d", tokA, `{"mode":65535}`, 400, "permission bits", ""},
		{"update: negative uid", "PATCH", pthA + "?path=/d", tokA, `{"uid":-1}`, 400, "malformed JSON", ""},
		{"list", "GET", dirA + "?path=/", tokA, ``, 200, `"path":"/d"`, "/d/f.txt"},
		{"list: depth 2", "GET", dirA + "?path=/&depth=2", tokA, ``, 200, `"path":"/d/f.txt"`, ""},
		{"list: depth 0", "GET", dirA + "?path=/&depth=0", tokA, ``, 400, "depth must be at least 1", ""},
		{"list: a file", "GET", dirA + "?path=/d/f.txt", tokA, ``, 404, "/d/f.txt", ""},
		{"list: empty dir", "GET", dirA + "?path=/x/y", tokA, ``, 200, `[]`, ""},
		{"remove", "DELETE", pthA + "?path=/d", tokA, ``, 204, "", ""},
		{"remove: gone", "DELETE", pthA + "?path=/d", tokA, ``, 404, "/d", ""},
		{"remove: the root", "DELETE", pthA + "?path=/", tokA, ``, 400, "root", ""},
		{"list: after remove", "GET", dirA + "?path=/&depth=5", tokA, ``, 200, `"/x/y"`, "/d"},
	}
}

// TestVolumeRoutes drives every volume route over a fake service, in
// order (later cases see what earlier ones made): statuses as the SDK
// expects them, E2B's error body, and who may reach what.
func TestVolumeRoutes(t *testing.T) {
	f := newVolumeFixture(t)
	doc := newDocCheck(t)
	groups := [][]volumeCase{volumeControlCases(), volumeAuthCases(), volumeContentCases()}
	for _, cases := range groups {
		for _, tc := range cases {
			ok := t.Run(tc.name, func(t *testing.T) {
				resp := f.send(t, tc.method, tc.path, tc.auth, strings.NewReader(tc.body))
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != tc.status {
					t.Fatalf("%s %s = %d, want %d; body %s", tc.method, tc.path, resp.StatusCode, tc.status, raw)
				}
				doc.check(t, tc.method, f.srv.URL+expand(tc.path, f.vars), tc.body, resp, raw, tc.status < 400)
				if want := expand(tc.contains, f.vars); !strings.Contains(string(raw), want) {
					t.Errorf("body %s does not contain %q", raw, want)
				}
				if tc.lacks != "" && strings.Contains(string(raw), tc.lacks) {
					t.Errorf("body %s contains %q", raw, tc.lacks)
				}
				if tc.status >= 400 {
					checkErrorBody(t, raw, tc.status)
				}
			})
			if !ok {
				t.FailNow()
			}
		}
	}
}
