package tplclient

import (
	"encoding/json"
	"github.com/warren-sandbox/warren/internal/wire"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "e2b_0123456789abcdef0123456789abcdef01234567"

// fakeAPI implements just enough of the template API for the client: one
// template per requested name, uploads kept by hash, and a scripted build
// whose log arrives two entries per poll.
type fakeAPI struct {
	srv *httptest.Server
	// absoluteURLs makes FileLink answer absolute upload URLs, as E2B's
	// signed storage URLs are; otherwise they are relative to the API.
	absoluteURLs bool
	// finalStatus is what a build turns into after two polls; reason goes
	// with "error".
	finalStatus string
	reason      map[string]any
	logs        []string

	mu       sync.Mutex
	uploads  map[string]upload // guarded by mu; by files hash
	present  map[string]bool   // guarded by mu; hashes the server already has
	started  *wire.BuildStart  // guarded by mu
	requests []string          // guarded by mu; "METHOD path"
	polls    int               // guarded by mu
	lastBody map[string]any    // guarded by mu; JSON body of the last POST/DELETE
}

type upload struct {
	body   []byte
	header http.Header
	length int64
}

func newFakeAPI(t *testing.T) *fakeAPI {
	f := &fakeAPI{finalStatus: wire.BuildReady, uploads: map[string]upload{}, present: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/templates", f.requestBuild)
	mux.HandleFunc("GET /templates/{id}/files/{hash}", f.fileLink)
	mux.HandleFunc("PUT /upload/{hash}", f.upload)
	mux.HandleFunc("POST /v2/templates/{id}/builds/{build}", f.startBuild)
	mux.HandleFunc("GET /templates/{id}/builds/{build}/status", f.status)
	mux.HandleFunc("GET /templates", f.list)
	mux.HandleFunc("GET /templates/{id}", f.get)
	mux.HandleFunc("DELETE /templates/{id}", f.delete)
	mux.HandleFunc("POST /templates/tags", f.assignTags)
	mux.HandleFunc("DELETE /templates/tags", f.removeTags)
	// "/templates/aliases/{alias}" and "/templates/{id}/tags" overlap for
	// ServeMux, so one handler tells them apart.
	mux.HandleFunc("GET /templates/{a}/{b}", func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.PathValue("a") == "aliases":
			f.alias(w, r.PathValue("b"))
		case r.PathValue("b") == "tags":
			f.tags(w, r)
		default:
			apiError(w, http.StatusNotFound, "no route")
		}
	})
	f.srv = httptest.NewServer(f.auth(mux))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) client() *Client {
	c := New(f.srv.URL+"/", testKey, f.srv.Client())
	c.PollInterval = time.Millisecond
	return c
}

// auth checks the key on API calls; uploads carry their own token.
func (f *fakeAPI) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.EscapedPath())
		f.mu.Unlock()
		if !strings.HasPrefix(r.URL.Path, "/upload/") && r.Header.Get("X-API-Key") != testKey {
			apiError(w, http.StatusUnauthorized, "Invalid API key")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func apiError(w http.ResponseWriter, status int, msg string) {
	reply(w, status, map[string]any{"code": status, "message": msg})
}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func (f *fakeAPI) readBody(r *http.Request) map[string]any {
	var m map[string]any
	json.NewDecoder(r.Body).Decode(&m)
	f.mu.Lock()
	f.lastBody = m
	f.mu.Unlock()
	return m
}

func (f *fakeAPI) requestBuild(w http.ResponseWriter, r *http.Request) {
	body := f.readBody(r)
	name, _ := body["name"].(string)
	if name == "bad name" {
		apiError(w, http.StatusBadRequest, "invalid template name")
		return
	}
	reply(w, http.StatusAccepted, map[string]any{"templateID": "tpl-" + name, "buildID": "build-1",
		"public": false, "names": []string{name}, "tags": []string{"default"}, "aliases": []string{}})
}

func (f *fakeAPI) fileLink(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	f.mu.Lock()
	present := f.present[hash]
	f.mu.Unlock()
	if present {
		reply(w, http.StatusCreated, map[string]any{"present": true})
		return
	}
	url := "/upload/" + hash + "?token=t1"
	if f.absoluteURLs {
		url = f.srv.URL + url
	}
	reply(w, http.StatusCreated, map[string]any{"present": false, "url": url,
		"headers": map[string]string{"X-Upload-Token": "t1", "Content-Length": "1"}})
}

func (f *fakeAPI) upload(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Query().Get("token") != "t1" || r.Header.Get("X-Upload-Token") != "t1" {
		apiError(w, http.StatusForbidden, "bad upload token")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploads[r.PathValue("hash")] = upload{body: body, header: r.Header.Clone(), length: r.ContentLength}
	f.present[r.PathValue("hash")] = true
}

func (f *fakeAPI) startBuild(w http.ResponseWriter, r *http.Request) {
	var req wire.BuildStart
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	f.mu.Lock()
	f.started = &req
	f.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (f *fakeAPI) status(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("build") != "build-1" {
		apiError(w, http.StatusNotFound, "build not found")
		return
	}
	offset, _ := strconv.Atoi(r.URL.Query().Get("logsOffset"))
	f.mu.Lock()
	f.polls++
	st := wire.BuildBuilding
	if f.polls > 2 {
		st = f.finalStatus
	}
	f.mu.Unlock()
	entries := []map[string]any{}
	for i := offset; i < len(f.logs) && i < offset+2; i++ {
		entries = append(entries, map[string]any{"timestamp": "2025-01-02T03:04:05Z", "level": "info", "message": f.logs[i], "step": i})
	}
	out := map[string]any{"templateID": r.PathValue("id"), "buildID": "build-1", "status": st, "logs": []string{}, "logEntries": entries}
	if st == wire.BuildError {
		out["reason"] = f.reason
	}
	reply(w, http.StatusOK, out)
}

func (f *fakeAPI) list(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, []map[string]any{{
		"templateID": "tpl-1", "buildID": "build-1", "names": []string{"web"}, "aliases": []string{"web"},
		"public": false, "cpuCount": 2, "memoryMB": 1024, "diskSizeMB": 4096, "envdVersion": "0.2.0",
		"buildStatus": "ready", "buildCount": 3, "spawnCount": 7, "createdAt": "2025-01-02T03:04:05Z",
		"updatedAt": "2025-01-02T03:04:05Z", "lastSpawnedAt": nil, "createdBy": nil,
	}})
}

func (f *fakeAPI) get(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("id"); id != "team/web:v1" {
		apiError(w, http.StatusNotFound, "template '"+id+"' not found")
		return
	}
	reply(w, http.StatusOK, map[string]any{
		"templateID": "tpl-1", "names": []string{"team/web"}, "aliases": []string{}, "public": true,
		"spawnCount": 1, "createdAt": "2025-01-02T03:04:05Z", "updatedAt": "2025-01-02T03:04:05Z",
		"lastSpawnedAt": "2025-02-02T03:04:05Z",
		"builds": []map[string]any{{"buildID": "build-1", "status": "ready", "cpuCount": 2, "memoryMB": 512,
			"createdAt": "2025-01-02T03:04:05Z", "updatedAt": "2025-01-02T03:04:05Z", "finishedAt": "2025-01-02T03:05:05Z"}},
	})
}

func (f *fakeAPI) delete(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") != "tpl-1" {
		apiError(w, http.StatusNotFound, "template not found")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeAPI) assignTags(w http.ResponseWriter, r *http.Request) {
	body := f.readBody(r)
	if body["target"] != "web:v1" {
		apiError(w, http.StatusNotFound, "target build not found")
		return
	}
	reply(w, http.StatusCreated, map[string]any{"buildID": "build-1", "tags": body["tags"]})
}

func (f *fakeAPI) removeTags(w http.ResponseWriter, r *http.Request) {
	f.readBody(r)
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeAPI) tags(w http.ResponseWriter, r *http.Request) {
	reply(w, http.StatusOK, []map[string]any{{"tag": "v1", "buildID": "build-1", "createdAt": "2025-01-02T03:04:05Z"}})
}

func (f *fakeAPI) alias(w http.ResponseWriter, alias string) {
	switch alias {
	case "mine":
		reply(w, http.StatusOK, map[string]any{"templateID": "tpl-1", "public": false})
	case "theirs":
		apiError(w, http.StatusForbidden, "not yours")
	case "broken":
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "upstream exploded\n")
	default:
		apiError(w, http.StatusNotFound, "no such alias")
	}
}

func (f *fakeAPI) uploaded(hash string) (upload, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.uploads[hash]
	return u, ok
}

func (f *fakeAPI) body() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastBody
}

func (f *fakeAPI) startedRequest() *wire.BuildStart {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}

func (f *fakeAPI) setPresent(hash string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.present[hash] = true
}

func (f *fakeAPI) requestLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}
