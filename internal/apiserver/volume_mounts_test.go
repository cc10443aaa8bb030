package apiserver

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/volume"
)

// TestCreateVolumeMounts: a create's volumeMounts reach the manager by
// name and path, in order, or are refused for their shape.
func TestCreateVolumeMounts(t *testing.T) {
	t.Parallel()
	s := &Server{opts: Options{MaxTimeout: time.Hour, MaxCPUCount: 4, MaxMemoryMB: 2048}}
	many := make([]string, volume.MaxMounts+1)
	for i := range many {
		many[i] = `{"name":"v","path":"/mnt/` + string(rune('a'+i)) + `"}`
	}
	tests := []struct {
		name, mounts string
		want         []store.VolumeMount
		err          string
	}{
		{"none", `null`, nil, ""},
		{"empty", `[]`, nil, ""},
		{"two", `[{"name":"data","path":"/mnt/data"},{"name":"cache_1","path":"/home/user/.cache"}]`,
			[]store.VolumeMount{{Name: "data", Path: "/mnt/data"}, {Name: "cache_1", Path: "/home/user/.cache"}}, ""},
		{"relative path", `[{"name":"data","path":"mnt/data"}]`, nil, "must be absolute and clean"},
		{"dot dot", `[{"name":"data","path":"/mnt/../etc"}]`, nil, "must be absolute and clean"},
		{"trailing slash", `[{"name":"data","path":"/mnt/"}]`, nil, "must be absolute and clean"},
		{"root", `[{"name":"data","path":"/"}]`, nil, "root"},
		{"NUL", `[{"name":"data","path":"/mnt/\u0000"}]`, nil, "NUL"},
		{"no name", `[{"name":"","path":"/mnt/data"}]`, nil, "not a volume name"},
		{"bad name", `[{"name":"../x","path":"/mnt/data"}]`, nil, "not a volume name"},
		{"no path", `[{"name":"data"}]`, nil, "must be absolute"},
		{"one path twice", `[{"name":"a","path":"/mnt"},{"name":"b","path":"/mnt"}]`, nil, "two volumes at /mnt"},
		{"too many", "[" + strings.Join(many, ",") + "]", nil, "at most 16"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b rest.NewSandbox
			if err := json.Unmarshal([]byte(`{"templateID":"base","volumeMounts":`+tc.mounts+`}`), &b); err != nil {
				t.Fatal(err)
			}
			req, err := s.createRequest(&b, true)
			if tc.err != "" {
				if !errdefs.IsInvalidArgument(err) || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want a 400 saying %q", err, tc.err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(req.VolumeMounts, tc.want) {
				t.Fatalf("mounts %+v, %v; want %+v", req.VolumeMounts, err, tc.want)
			}
		})
	}
}

// TestSandboxShowsVolumeMounts: a sandbox's details and list entries
// carry its volumeMounts, [] when it has none (the SDK's getInfo and
// list read them so).
func TestSandboxShowsVolumeMounts(t *testing.T) {
	t.Parallel()
	s := &Server{}
	tests := []struct {
		name   string
		mounts []store.VolumeMount
		want   string
	}{
		{"none", nil, `"volumeMounts":[]`},
		{"one", []store.VolumeMount{{VolumeID: "vol1", Name: "data", Path: "/mnt/data"}}, `"volumeMounts":[{"name":"data","path":"/mnt/data"}]`},
	}
	for _, tc := range tests {
		for _, full := range []bool{true, false} {
			sb := &store.Sandbox{ID: "sb1", State: store.SandboxRunning, VolumeMounts: tc.mounts}
			b, err := json.Marshal(s.detailResponse(sb, full))
			if err != nil || !strings.Contains(string(b), tc.want) || strings.Contains(string(b), "vol1") {
				t.Errorf("%s (full %v): %s, %v; want %s and no volume id", tc.name, full, b, err, tc.want)
			}
		}
	}
}

// TestFingerprintCoversVolumeMounts: a retried create with other mounts is
// another create, not a replay of the first.
func TestFingerprintCoversVolumeMounts(t *testing.T) {
	t.Parallel()
	fp := func(body string) string {
		var b rest.NewSandbox
		if err := json.Unmarshal([]byte(body), &b); err != nil {
			t.Fatal(err)
		}
		out, err := fingerprint(true, &b)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	base := fp(`{"templateID":"base","volumeMounts":[{"name":"a","path":"/mnt/a"}]}`)
	for _, other := range []string{
		`{"templateID":"base"}`,
		`{"templateID":"base","volumeMounts":[{"name":"b","path":"/mnt/a"}]}`,
		`{"templateID":"base","volumeMounts":[{"name":"a","path":"/mnt/b"}]}`,
	} {
		if fp(other) == base {
			t.Errorf("%s has the fingerprint of a create with other mounts", other)
		}
	}
}
