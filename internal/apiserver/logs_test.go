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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
	"github.com/warren-sandbox/warren/internal/template/builder"
)

// logsEnv is a server whose manager runs sandboxes on the fake backend
// (with a stand-in envd that accepts /init) and whose builder has one
// finished build with a log.
type logsEnv struct {
	srv       *httptest.Server
	key       string
	sandboxID string
}

var logT0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newLogsEnv(t *testing.T) *logsEnv {
	t.Helper()
	envd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(envd.Close)
	ap := netip.MustParseAddrPort(envd.Listener.Addr().String())
	b := fake.New("fake")
	b.UseIP(ap.Addr())
	st := sqlitetest.Open(t)
	ctx := context.Background()
	key, err := apikey.Generate()
	if err != nil {
		t.Fatal(err)
	}
	must(t, st.CreateAPIKey(ctx, &store.APIKey{ID: "k1", Name: "test", Hash: apikey.Hash(key), CreatedAt: time.Now()}))
	must(t, st.PutTemplate(ctx, &store.Template{ID: "base", Aliases: []string{"base"}, RootfsPath: t.TempDir()}))
	envdBin := filepath.Join(t.TempDir(), "envd")
	must(t, os.WriteFile(envdBin, nil, 0o755))
	mgr, err := lifecycle.New(lifecycle.Options{
		Store: st, Backends: map[string]runtime.Backend{"fake": b}, DefaultBackend: "fake",
		EnvdPath: envdBin, EnvdPort: ap.Port(), DefaultCPUCount: 1, DefaultMemoryMB: 128,
	})
	must(t, err)
	t.Cleanup(func() { _ = mgr.Shutdown(context.Background()) })
	sb, err := mgr.Create(ctx, sandbox.CreateRequest{TemplateID: "base", Timeout: time.Minute})
	must(t, err)
	var log strings.Builder
	for i, lvl := range []string{"DEBUG", "INFO", "WARN", "ERROR"} {
		fmt.Fprintf(&log, `{"time":%q,"level":%q,"msg":"line %d","component":"envd","pid":%d}`+"\n",
			logT0.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano), lvl, i, 100+i)
	}
	must(t, b.WriteLog(sb.ID, []byte(log.String())))

	work := t.TempDir()
	bld, err := builder.New(builder.Options{Store: st, FilesDir: t.TempDir(), WorkDir: work})
	must(t, err)
	must(t, st.CreateBuild(ctx, &store.Build{ID: "b1", TemplateID: "base", Status: store.BuildReady, CreatedAt: logT0}))
	var blog strings.Builder
	for i, lvl := range []string{"info", "info", "error"} {
		data, _ := json.Marshal(wire.BuildLogEntry{Timestamp: logT0.Add(time.Duration(i) * time.Second), Level: lvl, Message: fmt.Sprintf("step %d", i), Step: fmt.Sprint(i)})
		blog.Write(append(data, '\n'))
	}
	// The builder keeps a finished build's log in WorkDir/logs/<build>.jsonl.
	must(t, os.WriteFile(filepath.Join(work, "logs", "b1.jsonl"), []byte(blog.String()), 0o600))

	s := New(Options{Store: st, Manager: newMachine(mgr, st, ""), Builder: bld, Domain: "example.test"})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &logsEnv{srv: srv, key: key, sandboxID: sb.ID}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// get answers the status and the decoded JSON body.
func (e *logsEnv) get(t *testing.T, path string) (int, map[string]any) {
	t.Helper()
	resp := do(t, e.srv, "GET", path, "", e.key)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("GET %s: body %q is not a JSON object", path, raw)
	}
	return resp.StatusCode, body
}

// messages lists the "message" of each object in body[key].
func messages(t *testing.T, body map[string]any, key string) []string {
	t.Helper()
	list, ok := body[key].([]any)
	if !ok {
		t.Fatalf("%s is not a list: %v", key, body)
	}
	out := []string{}
	for _, v := range list {
		out = append(out, v.(map[string]any)["message"].(string))
	}
	return out
}

func TestSandboxLogs(t *testing.T) {
	t.Parallel()
	e := newLogsEnv(t)
	ms := func(i int) string { return fmt.Sprint(logT0.Add(time.Duration(i) * time.Second).UnixMilli()) }
	v2 := "/v2/sandboxes/" + e.sandboxID + "/logs"
	tests := []struct {
		name, query string
		want        []string
	}{
		{"all", "", []string{"line 0", "line 1", "line 2", "line 3"}},
		{"limit", "?limit=2", []string{"line 0", "line 1"}},
		{"zero limit", "?limit=0", []string{}},
		{"backward", "?direction=backward&limit=3", []string{"line 3", "line 2", "line 1"}},
		{"cursor forward", "?cursor=" + ms(2), []string{"line 2", "line 3"}},
		{"cursor backward", "?cursor=" + ms(1) + "&direction=backward", []string{"line 1", "line 0"}},
		{"level", "?level=warn", []string{"line 2", "line 3"}},
		{"search", "?search=ne%201", []string{"line 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := e.get(t, v2+tc.query)
			if got := messages(t, body, "logs"); status != 200 || !slices.Equal(got, tc.want) {
				t.Fatalf("status %d, messages %q; want %q", status, got, tc.want)
			}
		})
	}
	t.Run("entry shape", func(t *testing.T) {
		t.Parallel()
		_, body := e.get(t, v2+"?limit=1")
		entry := body["logs"].([]any)[0].(map[string]any)
		fields, _ := entry["fields"].(map[string]any)
		if entry["level"] != "debug" || entry["timestamp"] != logT0.Format(time.RFC3339Nano) || fields["component"] != "envd" || fields["pid"] != "100" {
			t.Fatalf("entry = %v", entry)
		}
	})
	t.Run("v1", func(t *testing.T) {
		t.Parallel()
		status, body := e.get(t, "/sandboxes/"+e.sandboxID+"/logs?start="+ms(1)+"&limit=2")
		if got := messages(t, body, "logEntries"); status != 200 || !slices.Equal(got, []string{"line 1", "line 2"}) {
			t.Fatalf("status %d, logEntries %q", status, got)
		}
		line := body["logs"].([]any)[0].(map[string]any)
		if !strings.Contains(line["line"].(string), `"msg":"line 1"`) || line["timestamp"] == nil {
			t.Fatalf("logs[0] = %v", line)
		}
	})
}

func TestBuildLogs(t *testing.T) {
	t.Parallel()
	e := newLogsEnv(t)
	path := "/templates/base/builds/b1/logs"
	tests := []struct {
		name, query string
		want        []string
	}{
		{"all", "", []string{"step 0", "step 1", "step 2"}},
		{"backward limit", "?direction=backward&limit=2", []string{"step 2", "step 1"}},
		{"cursor", fmt.Sprintf("?cursor=%d", logT0.Add(time.Second).UnixMilli()), []string{"step 1", "step 2"}},
		{"level", "?level=error", []string{"step 2"}},
		{"source", "?source=persistent", []string{"step 0", "step 1", "step 2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := e.get(t, path+tc.query)
			if got := messages(t, body, "logs"); status != 200 || !slices.Equal(got, tc.want) {
				t.Fatalf("status %d, messages %q; want %q", status, got, tc.want)
			}
		})
	}
	_, body := e.get(t, path+"?limit=1")
	if entry := body["logs"].([]any)[0].(map[string]any); entry["step"] != "0" || entry["level"] != "info" || entry["timestamp"] == nil {
		t.Fatalf("entry = %v", entry)
	}
}

func TestLogsErrors(t *testing.T) {
	t.Parallel()
	e := newLogsEnv(t)
	sb := "/sandboxes/" + e.sandboxID + "/logs"
	v2 := "/v2" + sb
	tests := []struct {
		name, path string
		status     int
		contains   string
	}{
		{"v1 unknown sandbox", "/sandboxes/nosuchsandbox/logs", 404, "nosuchsandbox"},
		{"v2 unknown sandbox", "/v2/sandboxes/nosuchsandbox/logs", 404, "nosuchsandbox"},
		{"v1 negative limit", sb + "?limit=-1", 400, "limit"},
		{"v1 bad start", sb + "?start=yesterday", 400, "start"},
		{"v2 limit over 1000", v2 + "?limit=1001", 400, "limit"},
		{"v2 bad direction", v2 + "?direction=sideways", 400, "direction"},
		{"v2 bad level", v2 + "?level=fatal", 400, "level"},
		{"v2 negative cursor", v2 + "?cursor=-5", 400, "cursor"},
		{"v2 long search", v2 + "?search=" + strings.Repeat("x", 257), 400, "search"},
		{"unknown build", "/templates/base/builds/nope/logs", 404, "nope"},
		{"build of another template", "/templates/other/builds/b1/logs", 404, "b1"},
		{"build limit over 100", "/templates/base/builds/b1/logs?limit=101", 400, "limit"},
		{"build bad source", "/templates/base/builds/b1/logs?source=cache", 400, "source"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			status, body := e.get(t, tc.path)
			msg, _ := body["message"].(string)
			if status != tc.status || body["code"] != float64(tc.status) || !strings.Contains(msg, tc.contains) {
				t.Fatalf("GET %s = %d %v; want %d with %q", tc.path, status, body, tc.status, tc.contains)
			}
		})
	}
}
