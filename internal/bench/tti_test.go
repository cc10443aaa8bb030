package bench

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestPoolMetrics reads a template's pool figures from the server's
// Prometheus text, summed over runtimes and split by result, and nothing
// when the server has no pool metrics or refuses the key.
func TestPoolMetrics(t *testing.T) {
	body := `# TYPE warren_pool_ready gauge
warren_pool_ready{runtime="runsc",template="base"} 7
warren_pool_ready{runtime="runc",template="base"} 1
warren_pool_ready{runtime="runsc",template="other"} 50
# TYPE warren_pool_target gauge
warren_pool_target{runtime="runsc",template="base"} 9
# TYPE warren_pool_creates_total counter
warren_pool_creates_total{result="hit",runtime="runsc",template="base"} 12
warren_pool_creates_total{result="miss",runtime="runsc",template="base"} 3
warren_pool_creates_total{result="hit",runtime="runsc",template="other"} 99
`
	tests := []struct {
		name   string
		status int
		body   string
		want   []int // ready, hits, misses; nil: none
	}{
		{"pools", http.StatusOK, body, []int{8, 12, 3}},
		{"no pools", http.StatusOK, "# TYPE go_goroutines gauge\ngo_goroutines 5\n", nil},
		{"not admin", http.StatusForbidden, `{"code":403}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("X-API-KEY") != "k" {
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				w.WriteHeader(tt.status)
				fmt.Fprint(w, tt.body)
			}))
			defer srv.Close()
			c := &Config{URL: srv.URL, APIKey: "k"}
			m := poolMetrics(context.Background(), c, "base")
			counters := poolCounters(context.Background(), c, "base")
			if tt.want == nil {
				if m != nil || counters != nil {
					t.Fatalf("got %v, %v; want none", m, counters)
				}
				return
			}
			if int(m["warren_pool_ready"]) != tt.want[0] || counters[0] != tt.want[1] || counters[1] != tt.want[2] {
				t.Fatalf("ready %v, counters %v; want %v", m["warren_pool_ready"], counters, tt.want)
			}
		})
	}
}

func TestCDF(t *testing.T) {
	got := cdf([]float64{30, 10, 20, 40})
	for i, want := range []struct{ x, y float64 }{{10, 0.25}, {20, 0.5}, {30, 0.75}, {40, 1}} {
		if got[i].X != want.x || got[i].Y != want.y {
			t.Fatalf("cdf[%d] = %v, want %v", i, got[i], want)
		}
	}
}
