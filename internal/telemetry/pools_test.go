package telemetry

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/sandbox"
)

func TestPoolMetrics(t *testing.T) {
	r := New()
	r.RegisterPools(func() []sandbox.PoolStat {
		return []sandbox.PoolStat{{Template: "base", Runtime: "runsc", Ready: 2, Target: 3, HeldMB: 40, Hits: 7, Misses: 1}}
	})
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`warren_pool_ready{runtime="runsc",template="base"} 2`,
		`warren_pool_target{runtime="runsc",template="base"} 3`,
		`warren_pool_memory_bytes{runtime="runsc",template="base"} 4.194304e+07`,
		`warren_pool_creates_total{result="hit",runtime="runsc",template="base"} 7`,
		`warren_pool_creates_total{result="miss",runtime="runsc",template="base"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
}
