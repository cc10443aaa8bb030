package main

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// fakeSandboxes answers create, get and list as warren's REST API does,
// keeping the volumeMounts each create sent.
type fakeSandboxes struct {
	mu     sync.Mutex
	mounts []any // the last create's volumeMounts, as sent
}

func newFakeSandboxes(t *testing.T) *fakeSandboxes {
	fs := &fakeSandboxes{}
	serveFake(t, fs)
	return fs
}

func (fs *fakeSandboxes) detail() map[string]any {
	now := time.Now().UTC()
	d := map[string]any{"sandboxID": "sb1", "templateID": "base", "clientID": "c", "state": "running",
		"startedAt": now, "endAt": now.Add(time.Minute), "cpuCount": 2, "memoryMB": 512, "diskSizeMB": 1024,
		"envdVersion": "0.1", "metadata": map[string]string{}}
	if fs.mounts != nil {
		d["volumeMounts"] = fs.mounts
	}
	return d
}

func (fs *fakeSandboxes) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v2/sandboxes":
		var body struct {
			VolumeMounts []any `json:"volumeMounts"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			fakeError(w, http.StatusBadRequest, err.Error())
			return
		}
		fs.mounts = body.VolumeMounts
		fakeReply(w, http.StatusCreated, map[string]any{"sandboxID": "sb1", "templateID": "base",
			"clientID": "c", "envdVersion": "0.1"})
	case r.Method == http.MethodGet && r.URL.Path == "/sandboxes/sb1":
		fakeReply(w, http.StatusOK, fs.detail())
	case r.Method == http.MethodGet && r.URL.Path == "/v2/sandboxes":
		fakeReply(w, http.StatusOK, []any{fs.detail()})
	default:
		fakeError(w, http.StatusNotFound, r.Method+" "+r.URL.Path+" not found")
	}
}

// TestSandboxVolumeMounts: --volume reaches the create's volumeMounts in
// order, and info and ls show them.
func TestSandboxVolumeMounts(t *testing.T) {
	fs := newFakeSandboxes(t)
	for _, tc := range []struct {
		name string
		args []string
		want []any
		show string // what info and ls print for the mounts
	}{
		{"none", nil, nil, ""},
		{"one", []string{"--volume", "data:/mnt/data"}, []any{map[string]any{"name": "data", "path": "/mnt/data"}}, "data:/mnt/data"},
		{"two", []string{"--volume=data:/mnt/data", "--volume", "cache:/root/.cache"}, []any{
			map[string]any{"name": "data", "path": "/mnt/data"}, map[string]any{"name": "cache", "path": "/root/.cache"},
		}, "data:/mnt/data,cache:/root/.cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs.mounts = []any{"stale"}
			out := captureStdout(t, func() error { return runCLI(append([]string{"sandbox", "create"}, tc.args...)...) })
			if strings.TrimSpace(out) != "sb1" {
				t.Errorf("create printed %q", out)
			}
			if !reflect.DeepEqual(fs.mounts, tc.want) {
				t.Errorf("create sent volumeMounts %v, want %v", fs.mounts, tc.want)
			}
			info := captureStdout(t, func() error { return runCLI("sandbox", "info", "sb1") })
			if !strings.Contains(info, "volumes   "+tc.show+"\n") {
				t.Errorf("info lacks the volumes line %q:\n%s", tc.show, info)
			}
			ls := captureStdout(t, func() error { return runCLI("sandbox", "ls") })
			want := tc.show
			if want == "" {
				want = "MiB" // the memory column's unit: no volumes column at all
			}
			if lines := strings.Split(strings.TrimSpace(ls), "\n"); len(lines) != 2 ||
				!strings.HasSuffix(lines[0], "VOLUMES") || !strings.HasSuffix(lines[1], " "+want) {
				t.Errorf("ls does not end its row with %q:\n%s", want, ls)
			}
		})
	}
}

func TestParseVolumeMounts(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    []warren.VolumeMount
		wantErr string
	}{
		{nil, nil, ""},
		{[]string{"data:/mnt/v"}, []warren.VolumeMount{{Name: "data", Path: "/mnt/v"}}, ""},
		{[]string{"a:/x", "vol-1:/y:z"}, []warren.VolumeMount{{Name: "a", Path: "/x"}, {Name: "vol-1", Path: "/y:z"}}, ""},
		{[]string{"data"}, nil, `--volume "data": want NAME:/path`},
		{[]string{":/mnt"}, nil, `--volume ":/mnt"`},
		{[]string{"data:mnt"}, nil, `--volume "data:mnt"`},
		{[]string{"data:"}, nil, `--volume "data:"`},
	} {
		got, err := parseVolumeMounts(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
