package warren

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/api/rest"
)

const tplTestKey = "e2b_0123456789abcdef0123456789abcdef01234567"

// fakeTemplateAPI implements just enough of the template API for the SDK:
// one template per requested name, uploads kept by hash, and a scripted
// build whose log arrives two entries per poll.
type fakeTemplateAPI struct {
	srv *httptest.Server
	// absoluteURLs makes file links absolute, as E2B's signed storage URLs
	// are; otherwise they are relative to the API.
	absoluteURLs bool
	// finalStatus is what a build turns into after two polls; reason goes
	// with "error".
	finalStatus string
	reason      map[string]any
	logs        []string

	mu       sync.Mutex
	uploads  map[string]tplUpload // guarded by mu; by files hash
	present  map[string]bool      // guarded by mu; hashes the server already has
	started  *rest.BuildStart     // guarded by mu
	requests []string             // guarded by mu; "METHOD path"
	polls    int                  // guarded by mu
	lastBody map[string]any       // guarded by mu; JSON body of the last POST/DELETE
	lastURL  string               // guarded by mu; path and query of the last request
}

type tplUpload struct {
	body   []byte
	header http.Header
	length int64
}

func newFakeTemplateAPI(t *testing.T) *fakeTemplateAPI {
	f := &fakeTemplateAPI{finalStatus: "ready", uploads: map[string]tplUpload{}, present: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/templates", f.requestBuild)
	mux.HandleFunc("GET /templates/{id}/files/{hash}", f.fileLink)
	mux.HandleFunc("PUT /upload/{hash}", f.upload)
	mux.HandleFunc("POST /v2/templates/{id}/builds/{build}", f.startBuild)
	mux.HandleFunc("GET /templates/{id}/builds/{build}/status", f.status)
	mux.HandleFunc("GET /templates/{id}/builds/{build}/logs", f.buildLogs)
	mux.HandleFunc("POST /templates/{id}/builds/{build}/cancel", f.cancel)
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
			tplError(w, http.StatusNotFound, "no route")
		}
	})
	f.srv = httptest.NewServer(f.auth(mux))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeTemplateAPI) client(t *testing.T) *Client {
	c, err := New(Config{APIURL: f.srv.URL + "/", APIKey: tplTestKey, HTTPClient: f.srv.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// auth checks the key on API calls; uploads carry their own token.
func (f *fakeTemplateAPI) auth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.requests = append(f.requests, r.Method+" "+r.URL.EscapedPath())
		f.lastURL = r.URL.RequestURI()
		f.mu.Unlock()
		if !strings.HasPrefix(r.URL.Path, "/upload/") && r.Header.Get("X-API-Key") != tplTestKey {
			tplError(w, http.StatusUnauthorized, "Invalid API key")
			return
		}
		next.ServeHTTP(w, r)
	})
}

func tplError(w http.ResponseWriter, status int, msg string) {
	tplReply(w, status, map[string]any{"code": status, "message": msg})
}

func tplReply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeTemplateAPI) readBody(r *http.Request) map[string]any {
	var m map[string]any
	_ = json.NewDecoder(r.Body).Decode(&m)
	f.mu.Lock()
	f.lastBody = m
	f.mu.Unlock()
	return m
}

func (f *fakeTemplateAPI) requestBuild(w http.ResponseWriter, r *http.Request) {
	body := f.readBody(r)
	name, _ := body["name"].(string)
	if name == "bad name" {
		tplError(w, http.StatusBadRequest, "invalid template name")
		return
	}
	tplReply(w, http.StatusAccepted, map[string]any{"templateID": "tpl-" + name, "buildID": "build-1",
		"public": false, "names": []string{name}, "tags": []string{"default"}, "aliases": []string{}})
}

func (f *fakeTemplateAPI) fileLink(w http.ResponseWriter, r *http.Request) {
	hash := r.PathValue("hash")
	f.mu.Lock()
	present := f.present[hash]
	f.mu.Unlock()
	if present {
		tplReply(w, http.StatusCreated, map[string]any{"present": true})
		return
	}
	url := "/upload/" + hash + "?token=t1"
	if f.absoluteURLs {
		url = f.srv.URL + url
	}
	tplReply(w, http.StatusCreated, map[string]any{"present": false, "url": url,
		"headers": map[string]string{"X-Upload-Token": "t1", "Content-Length": "1"}})
}

func (f *fakeTemplateAPI) upload(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.URL.Query().Get("token") != "t1" || r.Header.Get("X-Upload-Token") != "t1" {
		tplError(w, http.StatusForbidden, "bad upload token")
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.uploads[r.PathValue("hash")] = tplUpload{body: body, header: r.Header.Clone(), length: r.ContentLength}
	f.present[r.PathValue("hash")] = true
	w.WriteHeader(http.StatusCreated)
}

func (f *fakeTemplateAPI) startBuild(w http.ResponseWriter, r *http.Request) {
	var req rest.BuildStart
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		tplError(w, http.StatusBadRequest, err.Error())
		return
	}
	f.mu.Lock()
	f.started = &req
	f.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

func (f *fakeTemplateAPI) entries(from, n int) []map[string]any {
	out := []map[string]any{}
	for i := from; i < len(f.logs) && i < from+n; i++ {
		out = append(out, map[string]any{"timestamp": "2025-01-02T03:04:05Z", "level": "info", "message": f.logs[i], "step": strconv.Itoa(i)})
	}
	return out
}

func (f *fakeTemplateAPI) status(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("build") != "build-1" {
		tplError(w, http.StatusNotFound, "build not found")
		return
	}
	offset, _ := strconv.Atoi(r.URL.Query().Get("logsOffset"))
	f.mu.Lock()
	f.polls++
	st := "building"
	if f.polls > 2 {
		st = f.finalStatus
	}
	f.mu.Unlock()
	out := map[string]any{"templateID": r.PathValue("id"), "buildID": "build-1", "status": st, "logs": []string{}, "logEntries": f.entries(offset, 2)}
	if st == "error" && f.reason != nil {
		out["reason"] = f.reason
	}
	tplReply(w, http.StatusOK, out)
}

func (f *fakeTemplateAPI) buildLogs(w http.ResponseWriter, r *http.Request) {
	limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
	tplReply(w, http.StatusOK, map[string]any{"logs": f.entries(0, limit)})
}

func (f *fakeTemplateAPI) cancel(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("build") != "build-1" {
		tplError(w, http.StatusConflict, "build 'x' is not running (it is ready)")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeTemplateAPI) list(w http.ResponseWriter, r *http.Request) {
	tplReply(w, http.StatusOK, []map[string]any{{
		"templateID": "tpl-1", "buildID": "build-1", "names": []string{"web"}, "aliases": []string{"web"},
		"public": false, "cpuCount": 2, "memoryMB": 1024, "diskSizeMB": 4096, "envdVersion": "0.2.0",
		"buildStatus": "ready", "buildCount": 3, "spawnCount": 7, "createdAt": "2025-01-02T03:04:05Z",
		"updatedAt": "2025-01-02T03:04:05Z", "lastSpawnedAt": nil, "createdBy": nil,
	}})
}

func (f *fakeTemplateAPI) get(w http.ResponseWriter, r *http.Request) {
	if id := r.PathValue("id"); id != "team/web:v1" {
		tplError(w, http.StatusNotFound, "template '"+id+"' not found")
		return
	}
	tplReply(w, http.StatusOK, map[string]any{
		"templateID": "tpl-1", "buildID": "build-1", "names": []string{"team/web"}, "aliases": []string{}, "public": true,
		"cpuCount": 2, "memoryMB": 512, "diskSizeMB": 4096, "envdVersion": "0.2.0", "buildStatus": "ready",
		"spawnCount": 1, "createdAt": "2025-01-02T03:04:05Z", "updatedAt": "2025-01-02T03:04:05Z",
		"lastSpawnedAt": "2025-02-02T03:04:05Z", "labels": map[string]string{"team": "agents"},
		"builds": []map[string]any{{"buildID": "build-1", "status": "ready", "cpuCount": 2, "memoryMB": 512, "tags": []string{"v1"},
			"createdAt": "2025-01-02T03:04:05Z", "updatedAt": "2025-01-02T03:04:05Z", "finishedAt": "2025-01-02T03:05:05Z"}},
	})
}

func (f *fakeTemplateAPI) delete(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("id") != "tpl-1" {
		tplError(w, http.StatusNotFound, "template not found")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeTemplateAPI) assignTags(w http.ResponseWriter, r *http.Request) {
	body := f.readBody(r)
	if body["target"] != "web:v1" {
		tplError(w, http.StatusNotFound, "target build not found")
		return
	}
	tplReply(w, http.StatusCreated, map[string]any{"buildID": "build-1", "tags": body["tags"]})
}

func (f *fakeTemplateAPI) removeTags(w http.ResponseWriter, r *http.Request) {
	f.readBody(r)
	w.WriteHeader(http.StatusNoContent)
}

func (f *fakeTemplateAPI) tags(w http.ResponseWriter, r *http.Request) {
	tplReply(w, http.StatusOK, []map[string]any{{"tag": "v1", "buildID": "build-1", "createdAt": "2025-01-02T03:04:05Z"}})
}

func (f *fakeTemplateAPI) alias(w http.ResponseWriter, alias string) {
	switch alias {
	case "mine":
		tplReply(w, http.StatusOK, map[string]any{"templateID": "tpl-1", "public": false})
	case "theirs":
		tplError(w, http.StatusForbidden, "not yours")
	case "broken":
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, "upstream exploded\n")
	default:
		tplError(w, http.StatusNotFound, "no such alias")
	}
}

func (f *fakeTemplateAPI) uploaded(hash string) (tplUpload, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	u, ok := f.uploads[hash]
	return u, ok
}

func (f *fakeTemplateAPI) body() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastBody
}

func (f *fakeTemplateAPI) url() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastURL
}

func (f *fakeTemplateAPI) startedRequest() *rest.BuildStart {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.started
}

func (f *fakeTemplateAPI) setPresent(hash string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.present[hash] = true
}

func (f *fakeTemplateAPI) requestLog() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}
