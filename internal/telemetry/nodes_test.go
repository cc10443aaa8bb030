package telemetry

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

func TestNodeMetrics(t *testing.T) {
	now := time.Now()
	r := New()
	r.RegisterNodes(func(context.Context) ([]*store.Node, error) {
		return []*store.Node{
			{Name: "a", CPUs: 8, MemoryMB: 16384, Sandboxes: 3, ReservedCPUs: 3, ReservedMemoryMB: 1536, HeartbeatAt: now},
			{Name: "b", CPUs: 4, MemoryMB: 8192, HeartbeatAt: now.Add(-time.Hour)},
		}, nil
	}, 30*time.Second)
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`warren_nodes{state="alive"} 1`,
		`warren_nodes{state="dead"} 1`,
		`warren_node_sandboxes{node="a"} 3`,
		`warren_node_cpus{node="b"} 4`,
		`warren_node_reserved_cpus{node="a"} 3`,
		`warren_node_memory_bytes{node="a"} 1.7179869184e+10`,
		`warren_node_reserved_memory_bytes{node="a"} 1.610612736e+09`,
		`warren_node_heartbeat_age_seconds{node="b"} 3600`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
}
