package dockerfile

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// The E2B JS SDK does not export calculateFilesHash, but its public
// Template.toJSON(template, true) runs it for every copy() step, with the
// context's .dockerignore, exactly as Template.build does. These tests run
// that against the same directory and compare.
const sdkHashScript = `
import { Template } from %q;
const [ctx, ...pairs] = process.argv.slice(2);
const t = Template({ fileContextPath: ctx }).fromImage('debian');
for (let i = 0; i < pairs.length; i += 2) t.copy(pairs[i], pairs[i + 1]);
const out = JSON.parse(await Template.toJSON(t, true));
console.log(JSON.stringify(out.steps.map((s) => s.filesHash)));
`

// sdkModule finds the SDK's ESM entry point, or skips the test: it needs
// node and an installed e2b package, which a plain `go test` may lack.
func sdkModule(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	mod := os.Getenv("WARREN_E2B_SDK")
	if mod == "" {
		// The end-to-end suite's install (scripts/setup.sh runs npm ci there).
		mod, _ = filepath.Abs("../../../test/e2e/node_modules/e2b/dist/index.mjs")
	}
	if _, err := os.Stat(mod); err != nil {
		t.Skipf("E2B SDK not found at %s (set WARREN_E2B_SDK)", mod)
	}
	return mod
}

// runNode runs an ES module script (a format string taking the SDK path).
func runNode(t *testing.T, script string, args ...string) []byte {
	t.Helper()
	mod := sdkModule(t)
	p := filepath.Join(t.TempDir(), "script.mjs")
	if err := os.WriteFile(p, []byte(fmt.Sprintf(script, mod)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), "node", append([]string{p}, args...)...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	return out
}

func TestHashMatchesSDK(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, sampleTree())
	copies := [][2]string{
		{".", "/app"},
		{"./", "/app/"},
		{"src", "/app/src"},
		{"src/", "/srv/"},
		{"./src/sub", "/x"},
		{"*.txt", "/t/"},
		{"src/**/*.json", "/j/"},
		{"**/*.txt", "/all/"},
		{"{a.txt,exec.sh}", "/b/"},
		{"a.txt", "/a.txt"},
		{"exec.sh", "/usr/local/bin/"},
		{"my file.txt", "/s"},
		{"ü.txt", "/u"},
		{"link", "/l"},
		{"flink", "/f"},
		{"dangling", "/d"},
		{"empty", "/e"},
		{"tools", "/opt/tools"},
		{"a*", "/ab/"},
		{"src/sub/.env", "/env"},
		{"src/{braces}.txt", "/br"},
	}
	var args []string
	for _, c := range copies {
		args = append(args, c[0], c[1])
	}
	var want []string
	if err := json.Unmarshal(runNode(t, sdkHashScript, append([]string{dir}, args...)...), &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(copies) {
		t.Fatalf("SDK returned %d hashes for %d copies", len(want), len(copies))
	}
	bctx, err := NewContext(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range copies {
		got, err := bctx.Hash(c[0], c[1])
		if err != nil {
			t.Errorf("Hash(%q, %q): %v", c[0], c[1], err)
			continue
		}
		if got != want[i] {
			files, _ := bctx.Files(c[0])
			t.Errorf("Hash(%q, %q) = %s, SDK says %s; files %q", c[0], c[1], got, want[i], files)
		}
	}
}

// sdkBuildScript runs Template.build against a fake API so the SDK uploads
// its tar for each copy() source.
const sdkBuildScript = `
import { Template } from %q;
const [ctx, apiUrl, ...srcs] = process.argv.slice(2);
const t = Template({ fileContextPath: ctx }).fromImage('debian');
for (const s of srcs) t.copy(s, '/dest/');
await Template.build(t, 'tar-test', { apiKey: 'e2b_' + '0'.repeat(40), apiUrl });
`

func TestTarMatchesSDK(t *testing.T) {
	t.Parallel()
	dir := writeTree(t, sampleTree())
	srcs := []string{".", "src", "*.txt", "link", "tools", "{a.txt,exec.sh}", "empty"}
	api := newFakeUploadAPI(t)
	runNode(t, sdkBuildScript, append([]string{dir, api.srv.URL}, srcs...)...)
	bctx, err := NewContext(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, src := range srcs {
		hash, err := bctx.Hash(src, "/dest/")
		if err != nil {
			t.Fatal(err)
		}
		sdkTar, ok := api.upload(hash)
		if !ok {
			t.Errorf("%s: the SDK uploaded nothing under our hash %s", src, hash)
			continue
		}
		var ours bytes.Buffer
		if err := bctx.WriteTar(&ours, src); err != nil {
			t.Fatal(err)
		}
		want, got := tarListing(t, sdkTar), tarListing(t, ours.Bytes())
		if !slices.Equal(got, want) {
			t.Errorf("%s: tar differs from the SDK's\n got: %q\nwant: %q", src, got, want)
		}
	}
}

// tarListing describes each entry of a gzip tar in one comparable line.
func tarListing(t *testing.T, gz []byte) []string {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var out []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s type=%c mode=%o uid=%d gid=%d link=%s mtime=%d body=%q",
			h.Name, h.Typeflag, h.Mode&0o7777, h.Uid, h.Gid, h.Linkname, h.ModTime.Unix(), body))
	}
}

// fakeUploadAPI is the part of the template API Template.build touches:
// every file hash is missing, uploads are kept, builds finish at once.
type fakeUploadAPI struct {
	srv     *httptest.Server
	mu      sync.Mutex
	uploads map[string][]byte // guarded by mu
}

func newFakeUploadAPI(t *testing.T) *fakeUploadAPI {
	a := &fakeUploadAPI{uploads: map[string][]byte{}}
	mux := http.NewServeMux()
	reply := func(w http.ResponseWriter, status int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(v)
	}
	mux.HandleFunc("POST /v3/templates", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusAccepted, map[string]any{"templateID": "tpl", "buildID": "b1",
			"public": false, "names": []string{"tar-test"}, "tags": []string{}, "aliases": []string{}})
	})
	mux.HandleFunc("GET /templates/{id}/files/{hash}", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusCreated, map[string]any{"present": false, "url": a.srv.URL + "/upload/" + r.PathValue("hash")})
	})
	mux.HandleFunc("PUT /upload/{hash}", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.uploads[r.PathValue("hash")] = body
		a.mu.Unlock()
	})
	mux.HandleFunc("POST /v2/templates/{id}/builds/{build}", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	})
	mux.HandleFunc("GET /templates/{id}/builds/{build}/status", func(w http.ResponseWriter, r *http.Request) {
		reply(w, http.StatusOK, map[string]any{"templateID": "tpl", "buildID": "b1", "status": "ready",
			"logs": []string{}, "logEntries": []any{}})
	})
	a.srv = httptest.NewServer(mux)
	t.Cleanup(a.srv.Close)
	return a
}

func (a *fakeUploadAPI) upload(hash string) ([]byte, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b, ok := a.uploads[hash]
	return b, ok
}
