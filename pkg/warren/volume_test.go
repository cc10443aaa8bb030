package warren

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// volumeServer is a fake of warren's volume routes that checks what the
// SDK sends: the API key on /volumes, the volume's token (and no API key)
// on /volumecontent, and each call's query and body.
type volumeServer struct {
	*httptest.Server
	tokenFetches atomic.Int32 // GET /volumes/{id}
}

const testToken = "vtok_secret"

var testEntry = map[string]any{"name": "a.txt", "type": "file", "path": "/d/a.txt", "size": 5, "mode": 0o640,
	"uid": 1000, "gid": 1001, "atime": "2026-01-02T03:04:05Z", "mtime": "2026-01-02T03:04:06Z", "ctime": "2026-01-02T03:04:07Z"}

func reply(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func newVolumeServer(t *testing.T) *volumeServer {
	vs := &volumeServer{}
	control := http.NewServeMux()
	control.HandleFunc("POST /volumes", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		_ = json.NewDecoder(r.Body).Decode(&body)
		switch body["name"] {
		case "taken":
			reply(w, 409, map[string]any{"code": 409, "message": "volume taken exists"})
		case "data":
			reply(w, 201, map[string]any{"volumeID": "vol1", "name": "data", "token": testToken, "sizeMB": 1024,
				"createdAt": "2026-01-02T03:04:05Z"})
		default:
			reply(w, 400, map[string]any{"code": 400, "message": "bad name"})
		}
	})
	control.HandleFunc("GET /volumes", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 200, []map[string]any{
			{"volumeID": "vol1", "name": "data", "sizeMB": 1024, "usedBytes": 4096, "sandboxes": []string{"sb1", "sb2"}},
			{"volumeID": "vol2", "name": "empty"},
		})
	})
	control.HandleFunc("GET /volumes/vol1", func(w http.ResponseWriter, r *http.Request) {
		vs.tokenFetches.Add(1)
		reply(w, 200, map[string]any{"volumeID": "vol1", "name": "data", "token": testToken})
	})
	control.HandleFunc("DELETE /volumes/vol1", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	control.HandleFunc("DELETE /volumes/mounted", func(w http.ResponseWriter, r *http.Request) {
		reply(w, 409, map[string]any{"code": 409, "message": "mounted by sb1"})
	})
	vs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/volumecontent/") {
			vs.content(t, w, r)
			return
		}
		if r.Header.Get("X-API-KEY") != "e2b_test" {
			reply(w, 401, map[string]any{"code": 401, "message": "missing API key"})
			return
		}
		control.ServeHTTP(w, r)
	}))
	t.Cleanup(vs.Close)
	return vs
}

// content answers /volumecontent/vol1/...: the query must be exactly
// what the test case's path names (see contentCases).
func (vs *volumeServer) content(t *testing.T, w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-API-KEY") != "" {
		t.Errorf("%s %s carried the API key", r.Method, r.URL)
	}
	switch r.Header.Get("Authorization") {
	case "Bearer " + testToken:
	case "":
		reply(w, 401, map[string]any{"code": 401, "message": "no token"})
		return
	default:
		reply(w, 403, map[string]any{"code": 403, "message": "not this volume's token"})
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/volumecontent/vol1/") {
		reply(w, 404, map[string]any{"code": 404, "message": "no such volume"})
		return
	}
	q := r.URL.Query()
	key := r.Method + " " + strings.TrimPrefix(r.URL.Path, "/volumecontent/vol1") + "?" + q.Encode()
	switch q.Get("path") {
	case "/missing":
		reply(w, 404, map[string]any{"code": 404, "message": "path /missing not found"})
		return
	case "/exists":
		reply(w, 409, map[string]any{"code": 409, "message": "path /exists exists"})
		return
	case "/full":
		reply(w, 507, map[string]any{"code": 507, "message": "the volume is full"})
		return
	}
	switch key {
	case "GET /dir?depth=2&path=%2Fd":
		reply(w, 200, []any{testEntry, map[string]any{"name": "l", "type": "symlink", "path": "/d/l", "size": 1, "mode": 0o777,
			"uid": 0, "gid": 0, "atime": "2026-01-02T03:04:05Z", "mtime": "2026-01-02T03:04:05Z", "ctime": "2026-01-02T03:04:05Z", "target": "a.txt"}})
	case "POST /dir?force=true&gid=1001&mode=448&path=%2Fd%2Fe&uid=1000":
		reply(w, 201, testEntry)
	case "GET /path?path=%2Fd%2Fa.txt":
		reply(w, 200, testEntry)
	case "PATCH /path?path=%2Fd%2Fa.txt":
		body, _ := io.ReadAll(r.Body)
		if string(body) != `{"mode":416}` {
			reply(w, 400, map[string]any{"code": 400, "message": "body " + string(body)})
			return
		}
		reply(w, 200, testEntry)
	case "DELETE /path?path=%2Fd":
		w.WriteHeader(204)
	case "GET /file?path=%2Fd%2Fa.txt":
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write([]byte("hello"))
	case "PUT /file?force=true&mode=416&path=%2Fd%2Fa.txt", "PUT /file?path=%2Fd%2Fb.txt":
		body, _ := io.ReadAll(r.Body)
		if string(body) != "hello" || r.Header.Get("Content-Type") != "application/octet-stream" {
			reply(w, 400, map[string]any{"code": 400, "message": "body " + string(body)})
			return
		}
		reply(w, 201, testEntry)
	default:
		reply(w, 400, map[string]any{"code": 400, "message": "unexpected " + key})
	}
}

// newVolumeClient is a client of a new fake volume server.
func newVolumeClient(t *testing.T) (*volumeServer, *Client) {
	vs := newVolumeServer(t)
	return vs, volumeClient(t, vs.URL)
}

func volumeClient(t *testing.T, url string) *Client {
	t.Helper()
	t.Setenv("E2B_VOLUME_API_URL", "")
	c, err := New(Config{APIURL: url, APIKey: "e2b_test", Retry: RetryOptions{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestVolumeControl: create, get, list and delete send what the server
// expects and read every field it answers; refusals map to the SDK's
// error classes.
func TestVolumeControl(t *testing.T) {
	vs, c := newVolumeClient(t)
	ctx := t.Context()

	v, err := c.CreateVolume(ctx, "data")
	if err != nil {
		t.Fatal(err)
	}
	if v.ID != "vol1" || v.Name != "data" || v.Token != testToken || v.SizeMB != 1024 ||
		!v.CreatedAt.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("CreateVolume = %+v", v)
	}
	list, err := c.ListVolumes(ctx)
	if err != nil || len(list) != 2 {
		t.Fatalf("ListVolumes = %v, %v", list, err)
	}
	if l := list[0]; l.ID != "vol1" || l.Token != "" || l.UsedBytes != 4096 || !reflect.DeepEqual(l.Sandboxes, []string{"sb1", "sb2"}) {
		t.Errorf("ListVolumes[0] = %+v", l)
	}
	if l := list[1]; l.ID != "vol2" || l.Sandboxes != nil || l.SizeMB != 0 || !l.CreatedAt.IsZero() {
		t.Errorf("ListVolumes[1] = %+v", l)
	}
	got, err := c.GetVolume(ctx, "vol1")
	if err != nil || got.Token != testToken {
		t.Fatalf("GetVolume = %+v, %v", got, err)
	}
	if err := c.DeleteVolume(ctx, "vol1"); err != nil {
		t.Errorf("DeleteVolume: %v", err)
	}

	for _, tc := range []struct {
		name string
		err  error
		want error
	}{
		{"create a taken name", func() error { _, err := c.CreateVolume(ctx, "taken"); return err }(), ErrConflict},
		{"create a bad name", func() error { _, err := c.CreateVolume(ctx, "b/d"); return err }(), ErrInvalid},
		{"get an unknown id", func() error { _, err := c.GetVolume(ctx, "nope"); return err }(), ErrNotFound},
		{"delete a mounted volume", c.DeleteVolume(ctx, "mounted"), ErrConflict},
		{"delete an unknown id", c.DeleteVolume(ctx, "nope"), ErrNotFound},
		{"a wrong API key", func() error {
			bad, _ := New(Config{APIURL: vs.URL, APIKey: "e2b_wrong"})
			_, err := bad.ListVolumes(ctx)
			return err
		}(), ErrUnauthorized},
	} {
		if !errors.Is(tc.err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, tc.err, tc.want)
		}
	}
}

// TestVolumeContent: each content call's method, path, query and body,
// signed with the volume's token; entries decoded whole.
func TestVolumeContent(t *testing.T) {
	_, c := newVolumeClient(t)
	ctx := t.Context()
	v, err := c.CreateVolume(ctx, "data")
	if err != nil {
		t.Fatal(err)
	}
	want := VolumeEntry{Name: "a.txt", Type: VolumeFile, Path: "/d/a.txt", Size: 5, Mode: 0o640, UID: 1000, GID: 1001,
		ATime: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), MTime: time.Date(2026, 1, 2, 3, 4, 6, 0, time.UTC),
		CTime: time.Date(2026, 1, 2, 3, 4, 7, 0, time.UTC)}
	u32 := func(v uint32) *uint32 { return &v }

	entries, err := v.List(ctx, "/d", 2)
	if err != nil || len(entries) != 2 || !reflect.DeepEqual(entries[0], want) ||
		entries[1].Type != VolumeSymlink || entries[1].Target != "a.txt" {
		t.Fatalf("List = %+v, %v", entries, err)
	}
	checks := []struct {
		name string
		call func() (VolumeEntry, error)
	}{
		{"MakeDir", func() (VolumeEntry, error) {
			return v.MakeDir(ctx, "/d/e", VolumeWriteOptions{VolumeMetadata{UID: u32(1000), GID: u32(1001), Mode: u32(0o700)}, true})
		}},
		{"Stat", func() (VolumeEntry, error) { return v.Stat(ctx, "/d/a.txt") }},
		{"UpdateMetadata", func() (VolumeEntry, error) {
			return v.UpdateMetadata(ctx, "/d/a.txt", VolumeMetadata{Mode: u32(0o640)})
		}},
		{"WriteFile force", func() (VolumeEntry, error) {
			return v.WriteFile(ctx, "/d/a.txt", strings.NewReader("hello"), VolumeWriteOptions{VolumeMetadata{Mode: u32(0o640)}, true})
		}},
		{"WriteFileBytes", func() (VolumeEntry, error) {
			return v.WriteFileBytes(ctx, "/d/b.txt", []byte("hello"), VolumeWriteOptions{})
		}},
	}
	for _, tc := range checks {
		if got, err := tc.call(); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s = %+v, %v", tc.name, got, err)
		}
	}
	if data, err := v.ReadFile(ctx, "/d/a.txt"); err != nil || string(data) != "hello" {
		t.Errorf("ReadFile = %q, %v", data, err)
	}
	if err := v.Remove(ctx, "/d"); err != nil {
		t.Errorf("Remove: %v", err)
	}
	if ok, err := v.Exists(ctx, "/d/a.txt"); !ok || err != nil {
		t.Errorf("Exists(present) = %v, %v", ok, err)
	}
	if ok, err := v.Exists(ctx, "/missing"); ok || err != nil {
		t.Errorf("Exists(missing) = %v, %v", ok, err)
	}
}

// TestVolumeContentErrors: the content API's refusals come back as the
// SDK's error classes, with the server's message.
func TestVolumeContentErrors(t *testing.T) {
	_, c := newVolumeClient(t)
	ctx := t.Context()
	v, err := c.GetVolume(ctx, "vol1")
	if err != nil {
		t.Fatal(err)
	}
	wrong := &Volume{ID: "vol1", Token: "vtok_other", client: c}
	other := &Volume{ID: "vol9", Token: testToken, client: c}
	for _, tc := range []struct {
		name, msg string
		err       error
		want      error
	}{
		{"stat a missing path", "path /missing not found", func() error { _, err := v.Stat(ctx, "/missing"); return err }(), ErrNotFound},
		{"read a missing file", "path /missing not found", func() error { _, err := v.ReadFile(ctx, "/missing"); return err }(), ErrNotFound},
		{"list a missing dir", "path /missing not found", func() error { _, err := v.List(ctx, "/missing", 0); return err }(), ErrNotFound},
		{"write an existing file", "path /exists exists", func() error {
			_, err := v.WriteFileBytes(ctx, "/exists", nil, VolumeWriteOptions{})
			return err
		}(), ErrConflict},
		{"mkdir an existing dir", "path /exists exists", func() error { _, err := v.MakeDir(ctx, "/exists", VolumeWriteOptions{}); return err }(), ErrConflict},
		{"write to a full volume", "the volume is full", func() error {
			_, err := v.WriteFileBytes(ctx, "/full", []byte("x"), VolumeWriteOptions{})
			return err
		}(), ErrNoSpace},
		{"another volume's token", "not this volume's token", func() error { _, err := wrong.Stat(ctx, "/d/a.txt"); return err }(), ErrUnauthorized},
		{"an unknown volume", "no such volume", func() error { _, err := other.Stat(ctx, "/d/a.txt"); return err }(), ErrNotFound},
		{"remove a missing path", "path /missing not found", v.Remove(ctx, "/missing"), ErrNotFound},
	} {
		if !errors.Is(tc.err, tc.want) || !strings.Contains(tc.err.Error(), tc.msg) {
			t.Errorf("%s: %v, want %v with %q", tc.name, tc.err, tc.want, tc.msg)
		}
	}
	if _, err := v.Stat(ctx, "/missing"); errors.Is(err, ErrConflict) {
		t.Errorf("a 404 also reads as a conflict: %v", err)
	}
}

// TestVolumeTokenFetchedOnce: a listed volume has no token; its first
// content call fetches it, later ones reuse it.
func TestVolumeTokenFetchedOnce(t *testing.T) {
	vs, c := newVolumeClient(t)
	ctx := t.Context()
	list, err := c.ListVolumes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	v := list[0]
	for range 3 {
		if _, err := v.Stat(ctx, "/d/a.txt"); err != nil {
			t.Fatalf("Stat on a listed volume: %v", err)
		}
	}
	if n := vs.tokenFetches.Load(); n != 1 || v.Token != testToken {
		t.Errorf("token fetched %d times (token %q), want once", n, v.Token)
	}
}

// TestVolumeAPIURL: the content API is at the API URL unless
// E2B_VOLUME_API_URL or Config.VolumeAPIURL says otherwise.
func TestVolumeAPIURL(t *testing.T) {
	for _, tc := range []struct{ env, cfg, want string }{
		{"", "", "http://api:1"},
		{"http://vol:2/", "", "http://vol:2"},
		{"http://vol:2", "http://mine:3/", "http://mine:3"},
	} {
		t.Setenv("E2B_VOLUME_API_URL", tc.env)
		c, err := New(Config{APIURL: "http://api:1/", APIKey: "k", VolumeAPIURL: tc.cfg})
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Config().VolumeAPIURL; got != tc.want {
			t.Errorf("env %q, config %q: VolumeAPIURL %q, want %q", tc.env, tc.cfg, got, tc.want)
		}
	}
}

// TestCreateWithVolumeMounts: CreateOptions.VolumeMounts is sent as
// volumeMounts [{name, path}], in order, and GetInfo reads them back.
func TestCreateWithVolumeMounts(t *testing.T) {
	mounts := []VolumeMount{{Name: "data", Path: "/mnt/data"}, {Name: "cache", Path: "/root/.cache"}}
	wire := []any{map[string]any{"name": "data", "path": "/mnt/data"}, map[string]any{"name": "cache", "path": "/root/.cache"}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "POST /v2/sandboxes":
			var body map[string]any
			_ = json.NewDecoder(r.Body).Decode(&body)
			if got := body["volumeMounts"]; !reflect.DeepEqual(got, wire) {
				reply(w, 400, map[string]any{"code": 400, "message": "volumeMounts"})
				return
			}
			reply(w, 201, map[string]any{"sandboxID": "sb1", "templateID": "tpl", "clientID": "warren", "envdVersion": "0.2.0"})
		case "GET /sandboxes/sb1":
			reply(w, 200, map[string]any{"sandboxID": "sb1", "templateID": "tpl", "clientID": "warren", "envdVersion": "0.2.0",
				"startedAt": time.Now(), "endAt": time.Now(), "cpuCount": 1, "memoryMB": 512, "diskSizeMB": 1024,
				"state": "running", "volumeMounts": wire})
		case "GET /sandboxes/sb2":
			reply(w, 200, map[string]any{"sandboxID": "sb2", "templateID": "tpl", "clientID": "warren", "envdVersion": "0.2.0",
				"startedAt": time.Now(), "endAt": time.Now(), "cpuCount": 1, "memoryMB": 512, "diskSizeMB": 1024, "state": "running"})
		default:
			reply(w, 404, map[string]any{"code": 404, "message": "not found"})
		}
	}))
	t.Cleanup(srv.Close)
	c := volumeClient(t, srv.URL)
	ctx := t.Context()
	if _, err := c.Create(ctx, "base", CreateOptions{VolumeMounts: mounts}); err != nil {
		t.Fatalf("Create with volume mounts: %v", err)
	}
	info, err := c.GetInfo(ctx, "sb1")
	if err != nil || !reflect.DeepEqual(info.VolumeMounts, mounts) {
		t.Errorf("GetInfo = %+v, %v; want mounts %+v", info, err, mounts)
	}
	info, err = c.GetInfo(ctx, "sb2")
	if err != nil || info.VolumeMounts != nil {
		t.Errorf("GetInfo without mounts = %+v, %v", info.VolumeMounts, err)
	}
}
