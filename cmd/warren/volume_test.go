package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeVolumes is an in-memory stand-in for warren's volume routes, with
// the content API's status codes (E2B's: 409 for an existing file or
// directory without force, 404 for a missing parent or path).
type fakeVolumes struct {
	mu   sync.Mutex
	vols map[string]*fakeVolume // by id
}

type fakeVolume struct {
	id, name, token string
	files           map[string][]byte // path → content; a nil value is a directory
	sandboxes       []string
}

func newFakeVolumes(t *testing.T) string {
	return serveFake(t, &fakeVolumes{vols: map[string]*fakeVolume{}})
}

// serveFake serves h for the test and points the CLI at it, with no
// saved login and no other server in the environment.
func serveFake(t *testing.T, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Setenv("WARREN_CONFIG", filepath.Join(t.TempDir(), "none.json"))
	t.Setenv("E2B_API_URL", srv.URL)
	t.Setenv("E2B_API_KEY", "e2b_test")
	t.Setenv("E2B_VOLUME_API_URL", "")
	t.Setenv("E2B_DOMAIN", "")
	return srv.URL
}

func fakeReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func fakeError(w http.ResponseWriter, status int, msg string) {
	fakeReply(w, status, map[string]any{"code": status, "message": msg})
}

func (fv *fakeVolumes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fv.mu.Lock()
	defer fv.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if parts[0] == "volumecontent" && len(parts) == 3 {
		v := fv.vols[parts[1]]
		switch {
		case v == nil:
			fakeError(w, 404, "no volume "+parts[1])
		case r.Header.Get("Authorization") != "Bearer "+v.token || r.Header.Get("X-API-KEY") != "":
			fakeError(w, 403, "not this volume's token")
		default:
			v.content(w, r, parts[2])
		}
		return
	}
	if r.Header.Get("X-API-KEY") != "e2b_test" || parts[0] != "volumes" {
		fakeError(w, 401, "bad key or route")
		return
	}
	fv.control(w, r, parts)
}

func (fv *fakeVolumes) control(w http.ResponseWriter, r *http.Request, parts []string) {
	info := func(v *fakeVolume, token bool) map[string]any {
		m := map[string]any{"volumeID": v.id, "name": v.name, "sizeMB": 1024, "usedBytes": 3 << 20, "sandboxes": v.sandboxes}
		if token {
			m["token"] = v.token
		}
		return m
	}
	switch {
	case r.Method == "POST" && len(parts) == 1:
		var body struct{ Name string }
		_ = json.NewDecoder(r.Body).Decode(&body)
		for _, v := range fv.vols {
			if v.name == body.Name {
				fakeError(w, 409, "volume "+body.Name+" exists")
				return
			}
		}
		v := &fakeVolume{id: "vol-" + body.Name, name: body.Name, token: "tok-" + body.Name, files: map[string][]byte{"/": nil}}
		if body.Name == "busy" {
			v.sandboxes = []string{"sb1", "sb2"}
		}
		fv.vols[v.id] = v
		fakeReply(w, 201, info(v, true))
	case r.Method == "GET" && len(parts) == 1:
		out := []map[string]any{}
		for _, v := range fv.vols {
			out = append(out, info(v, false))
		}
		sort.Slice(out, func(i, j int) bool { return out[i]["name"].(string) < out[j]["name"].(string) })
		fakeReply(w, 200, out)
	case len(parts) == 2 && fv.vols[parts[1]] == nil:
		fakeError(w, 404, "no volume "+parts[1])
	case r.Method == "GET":
		fakeReply(w, 200, info(fv.vols[parts[1]], true))
	case r.Method == "DELETE":
		delete(fv.vols, parts[1])
		w.WriteHeader(204)
	default:
		fakeError(w, 400, "unexpected "+r.Method+" "+r.URL.Path)
	}
}

func (v *fakeVolume) entry(p string) map[string]any {
	typ, mode := "file", 0o644
	if v.files[p] == nil {
		typ, mode = "directory", 0o755
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return map[string]any{"name": path.Base(p), "type": typ, "path": p, "size": len(v.files[p]), "mode": mode,
		"uid": 0, "gid": 0, "atime": now, "mtime": now, "ctime": now}
}

func (v *fakeVolume) content(w http.ResponseWriter, r *http.Request, what string) {
	q := r.URL.Query()
	p := path.Clean("/" + q.Get("path"))
	data, exists := v.files[p]
	_, parent := v.files[path.Dir(p)]
	force := q.Get("force") == "true"
	switch r.Method + " " + what {
	case "GET dir":
		v.list(w, p, exists)
	case "POST dir":
		switch {
		case exists && !force:
			fakeError(w, 409, p+" exists")
		case !parent && !force:
			fakeError(w, 404, path.Dir(p)+" not found")
		default:
			for d := p; d != "/"; d = path.Dir(d) {
				v.files[d] = nil
			}
			fakeReply(w, 201, v.entry(p))
		}
	case "PUT file":
		switch {
		case exists && !force:
			fakeError(w, 409, p+" exists")
		case !parent:
			fakeError(w, 404, path.Dir(p)+" not found")
		default:
			body, _ := io.ReadAll(r.Body)
			v.files[p] = append([]byte{}, body...)
			if q.Get("mode") != "" && q.Get("mode") != "384" {
				fakeError(w, 400, "mode "+q.Get("mode"))
				return
			}
			fakeReply(w, 201, v.entry(p))
		}
	case "GET file", "GET path", "DELETE path":
		switch {
		case !exists:
			fakeError(w, 404, p+" not found")
		case what == "file":
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(data)
		case r.Method == "GET":
			fakeReply(w, 200, v.entry(p))
		default:
			for f := range v.files {
				if f == p || strings.HasPrefix(f, p+"/") {
					delete(v.files, f)
				}
			}
			w.WriteHeader(204)
		}
	default:
		fakeError(w, 400, "unexpected "+r.Method+" "+what)
	}
}

func (v *fakeVolume) list(w http.ResponseWriter, p string, exists bool) {
	if !exists {
		fakeError(w, 404, p+" not found")
		return
	}
	out := []map[string]any{}
	for f := range v.files {
		if f != "/" && path.Dir(f) == p {
			out = append(out, v.entry(f))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i]["name"].(string) < out[j]["name"].(string) })
	fakeReply(w, 200, out)
}

// withStdin runs f with os.Stdin reading s.
func withStdin(t *testing.T, s string, f func() error) error {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { _, _ = io.WriteString(w, s); w.Close() }()
	old := os.Stdin
	os.Stdin = r
	defer func() { os.Stdin = old; r.Close() }()
	return f()
}

// TestVolumeCommands drives `warren volume` against the fake, the
// commands one after another as a user would.
func TestVolumeCommands(t *testing.T) {
	newFakeVolumes(t)
	dir := t.TempDir()
	local := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(local, []byte("from a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(args ...string) string {
		t.Helper()
		return captureStdout(t, func() error { return runCLI(append([]string{"volume"}, args...)...) })
	}
	steps := []struct {
		args []string
		want []string // lines or fragments stdout must hold
	}{
		{[]string{"create", "data"}, []string{"vol-data"}},
		{[]string{"create", "busy", "--json"}, []string{`"token": "tok-busy"`, `"volumeID": "vol-busy"`}},
		{[]string{"ls"}, []string{"NAME", "busy", "vol-busy", "1024 MiB", "3.0 MiB", "sb1,sb2", "data"}},
		{[]string{"ls", "-q"}, []string{"vol-busy\nvol-data\n"}},
		{[]string{"token", "data"}, []string{"tok-data\n"}},
		{[]string{"token", "vol-data"}, []string{"tok-data\n"}},
		{[]string{"mkdir", "data:/a/b", "-p"}, nil},
		{[]string{"cp", local, "data:/a/"}, nil},
		{[]string{"cat", "data:/a/in.txt"}, []string{"from a file\n"}},
		{[]string{"cp", "vol-data:/a/in.txt", "-"}, []string{"from a file\n"}},
		{[]string{"ls", "data:/a"}, []string{"0755", "b/", "0644", "12", "in.txt"}},
		{[]string{"rm", "data:/a/in.txt"}, nil},
		{[]string{"rm", "busy"}, nil},
		{[]string{"ls", "-q"}, []string{"vol-data\n"}},
	}
	for _, s := range steps {
		got := out(s.args...)
		for _, w := range s.want {
			if !strings.Contains(got, w) {
				t.Fatalf("volume %v: %q lacks %q", s.args, got, w)
			}
		}
	}
	if err := withStdin(t, "from stdin", func() error {
		return runCLI("volume", "cp", "-", "data:/a/b/s.txt", "--mode", "600")
	}); err != nil {
		t.Fatalf("cp from stdin: %v", err)
	}
	dst := filepath.Join(dir, "out")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := runCLI("volume", "cp", "data:/a/b/s.txt", dst); err != nil {
		t.Fatalf("cp into a directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, "s.txt")); err != nil || string(b) != "from stdin" {
		t.Fatalf("downloaded %q, %v", b, err)
	}
}

// TestVolumeCompletion: rm, token and sandbox create --volume complete
// the team's volume names.
func TestVolumeCompletion(t *testing.T) {
	newFakeVolumes(t)
	for _, name := range []string{"data", "models"} {
		captureStdout(t, func() error { return runCLI("volume", "create", name) })
	}
	for _, sub := range []string{"rm", "token"} {
		out, err := run("__complete", "volume", sub, "")
		if err != nil || !strings.Contains(out, "data\tvol-data\nmodels\tvol-models\n") {
			t.Errorf("completing volume %s: %v\n%s", sub, err, out)
		}
	}
	// sandbox create --volume completes NAME:/ and leaves the path to type.
	out, err := run("__complete", "sandbox", "create", "--volume", "")
	if err != nil || !strings.Contains(out, "data:/\tvol-data\nmodels:/\tvol-models\n:6\n") {
		t.Errorf("completing sandbox create --volume: %v\n%s", err, out)
	}
}

// TestVolumeCommandErrors: bad input and the server's refusals are
// errors naming what went wrong.
func TestVolumeCommandErrors(t *testing.T) {
	newFakeVolumes(t)
	captureStdout(t, func() error { return runCLI("volume", "create", "data") })
	if err := runCLI("volume", "cp", filepath.Join(t.TempDir()), "data:/x"); err == nil {
		t.Fatal("cp of a directory: no error")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", "data"}, "409"},
		{[]string{"create"}, "usage: warren volume create NAME"},
		{[]string{"rm", "nope"}, `no volume "nope"`},
		{[]string{"token", "nope"}, "not found"},
		{[]string{"cat", "data"}, `"data" is not VOLUME:/path`},
		{[]string{"cat", "data:/missing"}, "/missing not found"},
		{[]string{"cat", "nope:/x"}, `no volume "nope"`},
		{[]string{"cp", "a", "b"}, "exactly one side must be VOLUME:/path"},
		{[]string{"cp", "data:/a", "data:/b"}, "exactly one side must be VOLUME:/path"},
		{[]string{"cp", "-", "data:/"}, "name the file to write from stdin"},
		{[]string{"cp", "--mode", "999", "-", "data:/x"}, `--mode "999"`},
		{[]string{"mkdir", "data:/x/y"}, "/x not found"},
		{[]string{"mkdir", "data:/"}, "409"},
		{[]string{"ls", "data:/missing"}, "/missing not found"},
	} {
		err := runCLI(append([]string{"volume"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("volume %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
	// A file written without --no-clobber is replaced; with it, refused.
	for _, tc := range []struct {
		args    []string
		wantErr bool
	}{
		{[]string{"cp", "-", "data:/f"}, false},
		{[]string{"cp", "-", "data:/f"}, false},
		{[]string{"cp", "-n", "-", "data:/f"}, true},
	} {
		err := withStdin(t, "x", func() error { return runCLI(append([]string{"volume"}, tc.args...)...) })
		if (err != nil) != tc.wantErr {
			t.Errorf("volume %v: %v, want error %v", tc.args, err, tc.wantErr)
		}
	}
}
