package warren

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestUsage: the query carries the window in unix seconds and the step in
// seconds; the answer becomes Usage; a 403 is ErrUnauthorized.
func TestUsage(t *testing.T) {
	t.Parallel()
	start := time.Unix(1_800_000_000, 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path != "/usage" || r.Header.Get("X-API-KEY") != "e2b_test":
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"code":404,"message":"no route"}`))
		case q.Get("team") == "acme":
			w.WriteHeader(403)
			_, _ = w.Write([]byte(`{"code":403,"message":"only the admin key reads another team's usage"}`))
		case q.Get("start") != "1800000000" || q.Get("end") != "1800003600" || q.Get("step") != "600":
			w.WriteHeader(400)
			_, _ = w.Write([]byte(`{"code":400,"message":"unexpected query ` + r.URL.RawQuery + `"}`))
		default:
			_ = json.NewEncoder(w).Encode(map[string]any{"team": "default", "step": 600, "points": []map[string]any{
				{"timestamp": start.UTC(), "timestampUnix": start.Unix(), "runningSandboxes": 3, "vcpus": 6, "memoryMB": 1536, "cpuUsedSeconds": 1.5},
			}})
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{APIURL: srv.URL, APIKey: "e2b_test"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := c.Usage(t.Context(), start, start.Add(time.Hour), 10*time.Minute)
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	want := UsagePoint{Time: start.UTC(), RunningSandboxes: 3, VCPUs: 6, MemoryMB: 1536, CPUUsed: 1500 * time.Millisecond}
	if u.Team != "default" || u.Step != 10*time.Minute || len(u.Points) != 1 || !u.Points[0].Time.Equal(want.Time) {
		t.Fatalf("Usage = %+v", u)
	}
	if got := u.Points[0]; got.RunningSandboxes != want.RunningSandboxes || got.VCPUs != want.VCPUs || got.MemoryMB != want.MemoryMB || got.CPUUsed != want.CPUUsed {
		t.Errorf("point %+v, want %+v", got, want)
	}
	if _, err := c.TeamUsage(t.Context(), "acme", start, start.Add(time.Hour), 10*time.Minute); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("TeamUsage of another team: %v, want ErrUnauthorized", err)
	}
}
