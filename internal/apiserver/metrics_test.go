package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// newMetricsServer is a server whose manager runs one sandbox on the fake
// backend (a stand-in envd accepts /init).
func newMetricsServer(t *testing.T) (srv *httptest.Server, key, id string) {
	t.Helper()
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	envd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(envd.Close)
	ap := netip.MustParseAddrPort(envd.Listener.Addr().String())
	b := fake.New("fake")
	b.UseIP(ap.Addr())
	st := sqlitetest.Open(t)
	ctx := context.Background()
	key, err := apikey.Generate()
	check(err)
	check(st.CreateAPIKey(ctx, &store.APIKey{ID: "k1", Name: "test", Hash: apikey.Hash(key), CreatedAt: time.Now()}))
	check(st.PutTemplate(ctx, &store.Template{ID: "base", Aliases: []string{"base"}, RootfsPath: t.TempDir()}))
	envdBin := filepath.Join(t.TempDir(), "envd")
	check(os.WriteFile(envdBin, nil, 0o755))
	mgr, err := lifecycle.New(lifecycle.Options{
		Store: st, Backends: map[string]runtime.Backend{"fake": b}, DefaultBackend: "fake",
		EnvdPath: envdBin, EnvdPort: ap.Port(), DefaultCPUCount: 1, DefaultMemoryMB: 128,
	})
	check(err)
	t.Cleanup(func() { _ = mgr.Shutdown(context.Background()) })
	sb, err := mgr.Create(ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute})
	check(err)
	s := New(Options{Store: st, Manager: newMachine(mgr, st, ""), Domain: "example.test"})
	srv = httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, key, sb.ID
}

func TestMetricsWindow(t *testing.T) {
	t.Parallel()
	srv, key, id := newMetricsServer(t)
	now := time.Now().Unix()
	tests := []struct {
		name, query string
		want        int // samples; -1: at least one
	}{
		{"no window: the sandbox's life", "", -1},
		{"around now", fmt.Sprintf("?start=%d&end=%d", now-60, now+60), -1},
		{"an hour ago", fmt.Sprintf("?start=%d&end=%d", now-7200, now-3600), 0},
		{"start only, in the future", fmt.Sprintf("?start=%d", now+3600), 0},
		{"end only, before creation", fmt.Sprintf("?end=%d", now-3600), 0},
		{"empty values are absent", "?start=&end=", -1},
	}
	for _, tc := range tests {
		resp := do(t, srv, "GET", "/sandboxes/"+id+"/metrics"+tc.query, "", key)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var got []map[string]any
		if resp.StatusCode != 200 || json.Unmarshal(raw, &got) != nil || got == nil {
			t.Fatalf("%s: %d %s; want 200 and an array", tc.name, resp.StatusCode, raw)
		}
		if tc.want >= 0 && len(got) != tc.want || tc.want < 0 && len(got) == 0 {
			t.Fatalf("%s: %d samples, want %d", tc.name, len(got), tc.want)
		}
		for _, m := range got {
			for _, k := range []string{"timestamp", "timestampUnix", "cpuCount", "cpuUsedPct", "memUsed", "memTotal", "memCache", "diskUsed", "diskTotal"} {
				if _, ok := m[k]; !ok {
					t.Fatalf("%s: sample without %s: %s", tc.name, k, raw)
				}
			}
		}
	}
}

func TestBatchMetricsLatest(t *testing.T) {
	t.Parallel()
	srv, key, id := newMetricsServer(t)
	resp := do(t, srv, "GET", "/sandboxes/metrics?sandbox_ids="+id+",doesnotexist0000", "", key)
	defer resp.Body.Close()
	var body struct {
		Sandboxes map[string]struct {
			TimestampUnix int64 `json:"timestampUnix"`
			MemTotal      int64 `json:"memTotal"`
		} `json:"sandboxes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d, %v", resp.StatusCode, err)
	}
	m, ok := body.Sandboxes[id]
	if len(body.Sandboxes) != 1 || !ok || m.MemTotal != 128<<20 || time.Since(time.Unix(m.TimestampUnix, 0)) > time.Minute {
		t.Fatalf("batch = %+v; want only %s's latest sample", body.Sandboxes, id)
	}
}
