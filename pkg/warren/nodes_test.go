package warren

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestNodes: GET /nodes becomes Nodes, state as Alive; a 403 is
// ErrUnauthorized.
func TestNodes(t *testing.T) {
	t.Parallel()
	hb := time.Unix(1_800_000_000, 0).UTC()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path != "/nodes":
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"code":404,"message":"no route"}`))
		case r.Header.Get("X-API-KEY") != "e2b_admin":
			w.WriteHeader(403)
			_, _ = w.Write([]byte(`{"code":403,"message":"only the admin key reads /nodes"}`))
		default:
			_, _ = w.Write([]byte(`[{"name":"a","advertiseURL":"http://10.0.0.7:3000","state":"alive","cpuCount":8,"memoryMB":16384,
				"diskSizeMB":100000,"runningSandboxes":2,"reservedCPUs":3,"reservedMemoryMB":768,"templates":["base"],
				"version":"v1","startedAt":"2027-01-15T08:00:00Z","heartbeatAt":"2027-01-15T08:00:00Z"},
				{"name":"b","advertiseURL":"http://10.0.0.8:3000","state":"dead","cpuCount":4,"memoryMB":1,"diskSizeMB":1,
				"runningSandboxes":0,"reservedCPUs":0,"reservedMemoryMB":0,"templates":[],"version":"v1",
				"startedAt":"2027-01-15T08:00:00Z","heartbeatAt":"2027-01-15T08:00:00Z"}]`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{APIURL: srv.URL, APIKey: "e2b_admin"})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := c.Nodes(t.Context())
	if err != nil {
		t.Fatalf("Nodes: %v", err)
	}
	if len(nodes) != 2 || !nodes[0].Alive || nodes[1].Alive || nodes[0].CPUs != 8 || nodes[0].ReservedMemoryMB != 768 ||
		nodes[0].DiskMB != 100000 || len(nodes[0].Templates) != 1 || !nodes[0].HeartbeatAt.Equal(hb) {
		t.Fatalf("Nodes = %+v", nodes)
	}
	other, err := New(Config{APIURL: srv.URL, APIKey: "e2b_team"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Nodes(t.Context()); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Nodes with a team's key: %v, want ErrUnauthorized", err)
	}
}

// TestDeleteNode: DELETE /nodes/{name} becomes DeleteNode; a 409 is
// ErrConflict.
func TestDeleteNode(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method != http.MethodDelete:
			w.WriteHeader(405)
		case r.URL.Path == "/nodes/gone":
			w.WriteHeader(http.StatusNoContent)
		case r.URL.Path == "/nodes/alive":
			w.WriteHeader(409)
			_, _ = w.Write([]byte(`{"code":409,"message":"node \"alive\" is alive: stop it first"}`))
		default:
			w.WriteHeader(404)
			_, _ = w.Write([]byte(`{"code":404,"message":"node not found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{APIURL: srv.URL, APIKey: "e2b_admin"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.DeleteNode(t.Context(), "gone"); err != nil {
		t.Errorf("DeleteNode(gone): %v", err)
	}
	if err := c.DeleteNode(t.Context(), "alive"); !errors.Is(err, ErrConflict) {
		t.Errorf("DeleteNode(alive): %v, want ErrConflict", err)
	}
	if err := c.DeleteNode(t.Context(), "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("DeleteNode(nope): %v, want ErrNotFound", err)
	}
}
