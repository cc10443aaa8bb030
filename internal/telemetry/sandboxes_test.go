package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// scrape returns r's exposition text.
func scrape(t *testing.T, r *Registry) string {
	t.Helper()
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 {
		t.Fatalf("scrape: %d %s", rec.Code, body)
	}
	return string(body)
}

// running is a running sandbox with a sample.
func running(id, team string) sandbox.Live {
	return sandbox.Live{ID: id, TemplateID: "base", Runtime: "runsc", Team: team, Running: true, CPUCount: 2, MemoryMB: 512,
		Latest: &sandbox.Metric{CPUUsedPct: 25, MemUsed: 1 << 20, MemTotal: 512 << 20, DiskUsed: 4096, DiskTotal: 1 << 30}}
}

// sandboxSeriesCase is one census and what its scrape must and must not show.
type sandboxSeriesCase struct {
	name     string
	live     []sandbox.Live
	limit    int
	want     []string
	wantNot  []string
	wantDrop int
}

func sandboxSeriesCases() []sandboxSeriesCase {
	paused := sandbox.Live{ID: "p1", TemplateID: "base", Runtime: "runsc", Team: "acme"}
	unsampled := sandbox.Live{ID: "u1", TemplateID: "code", Runtime: "runc", Team: "acme", Running: true}
	return []sandboxSeriesCase{
		{
			name:  "counts and gauges",
			live:  []sandbox.Live{running("a1", "acme"), running("a2", "acme"), paused, unsampled},
			limit: 10,
			want: []string{
				`warren_sandboxes{runtime="runsc",state="running",team="acme",template="base"} 2`,
				`warren_sandboxes{runtime="runsc",state="paused",team="acme",template="base"} 1`,
				`warren_sandboxes{runtime="runc",state="running",team="acme",template="code"} 1`,
				`warren_sandbox_cpu_usage_ratio{sandbox_id="a1",team="acme",template="base"} 0.25`,
				`warren_sandbox_memory_bytes{sandbox_id="a2",team="acme",template="base"} 1.048576e+06`,
				`warren_sandbox_memory_limit_bytes{sandbox_id="a1",team="acme",template="base"} 5.36870912e+08`,
				`warren_sandbox_disk_bytes{sandbox_id="a1",team="acme",template="base"} 4096`,
				`warren_sandbox_disk_limit_bytes{sandbox_id="a1",team="acme",template="base"} 1.073741824e+09`,
			},
			// Paused and not yet sampled sandboxes have no per-sandbox series.
			wantNot: []string{`sandbox_id="p1"`, `sandbox_id="u1"`},
		},
		{
			name:     "capped: the first by id stay",
			live:     []sandbox.Live{running("c", "t"), running("a", "t"), running("d", "t"), running("b", "t")},
			limit:    2,
			want:     []string{`warren_sandbox_cpu_usage_ratio{sandbox_id="a"`, `warren_sandbox_cpu_usage_ratio{sandbox_id="b"`, `warren_sandboxes{runtime="runsc",state="running",team="t",template="base"} 4`},
			wantNot:  []string{`sandbox_id="c"`, `sandbox_id="d"`},
			wantDrop: 2,
		},
		{
			name:     "limit 0: counts only",
			live:     []sandbox.Live{running("a", "t")},
			limit:    0,
			want:     []string{`warren_sandboxes{runtime="runsc",state="running",team="t",template="base"} 1`},
			wantNot:  []string{`sandbox_id=`},
			wantDrop: 1,
		},
	}
}

func TestSandboxSeries(t *testing.T) {
	t.Parallel()
	tests := sandboxSeriesCases()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := New()
			r.RegisterSandboxes(func() []sandbox.Live { return tt.live }, tt.limit)
			body := scrape(t, r)
			for _, w := range tt.want {
				if !strings.Contains(body, w) {
					t.Errorf("no %s in\n%s", w, grepWarren(body))
				}
			}
			for _, w := range tt.wantNot {
				if strings.Contains(body, w) {
					t.Errorf("unexpected %s in\n%s", w, grepWarren(body))
				}
			}
			if w := fmt.Sprintf("warren_sandbox_series_dropped_total %d\n", tt.wantDrop); !strings.Contains(body, w) {
				t.Errorf("no %q in\n%s", w, grepWarren(body))
			}
		})
	}
}

// grepWarren keeps warren's own lines, for readable failures.
func grepWarren(body string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.HasPrefix(l, "warren_") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestOutcome(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  error
		want string
	}{
		{nil, OutcomeSuccess},
		{fmt.Errorf("admitting: %w", errdefs.ErrQuotaExceeded), OutcomeRejected},
		{errdefs.New(errdefs.ErrUnavailable, "host busy"), OutcomeRejected},
		{errdefs.New(errdefs.ErrNotFound, "no template"), OutcomeInvalid},
		{errdefs.New(errdefs.ErrConflict, "already paused"), OutcomeInvalid},
		{fmt.Errorf("waiting for envd: %w", context.Canceled), OutcomeInvalid},
		{errors.New("runsc exited 1"), OutcomeError},
	}
	for _, tt := range tests {
		if got := Outcome(tt.err); got != tt.want {
			t.Errorf("Outcome(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

func TestOperationAndRequestSeries(t *testing.T) {
	t.Parallel()
	r := New()
	r.ObserveOp(sandbox.OpCreate, "runsc", 300*time.Millisecond, nil)
	r.ObserveOp(sandbox.OpCreate, "runsc", 2*time.Second, errdefs.New(errdefs.ErrQuotaExceeded, "full"))
	r.ObserveOp(sandbox.OpKill, "runc", 3*time.Millisecond, nil)
	r.ObserveOp("unknown-op", "runc", time.Second, nil) // ignored, not a new series
	r.ObserveBuild("ready", 90*time.Second)
	r.ObserveBuild("cancelled", time.Second)
	r.ObserveRequest("GET /sandboxes/{id}", 200, 2*time.Millisecond)
	r.ObserveRequest("GET /sandboxes/{id}", 404, time.Millisecond)
	r.ObserveRequest("", 404, time.Millisecond)
	r.ObserveRequest("/", 404, time.Millisecond)
	body := scrape(t, r)
	for _, w := range []string{
		`warren_sandbox_create_duration_seconds_count{outcome="success",runtime="runsc"} 1`,
		`warren_sandbox_create_duration_seconds_bucket{outcome="success",runtime="runsc",le="0.25"} 0`,
		`warren_sandbox_create_duration_seconds_bucket{outcome="success",runtime="runsc",le="0.5"} 1`,
		`warren_sandbox_create_duration_seconds_count{outcome="rejected",runtime="runsc"} 1`,
		`warren_sandbox_kill_duration_seconds_bucket{outcome="success",runtime="runc",le="0.005"} 1`,
		`warren_sandbox_create_duration_seconds_bucket{outcome="success",runtime="runsc",le="60"} 1`,
		`warren_template_builds_total{result="ready"} 1`,
		`warren_template_builds_total{result="cancelled"} 1`,
		`warren_template_build_duration_seconds_bucket{result="ready",le="120"} 1`,
		`warren_http_requests_total{code="200",route="GET /sandboxes/{id}"} 1`,
		`warren_http_requests_total{code="404",route="GET /sandboxes/{id}"} 1`,
		`warren_http_requests_total{code="404",route="other"} 2`,
		`warren_http_request_duration_seconds_count{route="GET /sandboxes/{id}"} 2`,
	} {
		if !strings.Contains(body, w) {
			t.Errorf("no %s in\n%s", w, grepWarren(body))
		}
	}
	if strings.Contains(body, "unknown-op") {
		t.Errorf("an unknown operation made a series:\n%s", grepWarren(body))
	}
}
