package apiserver

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

func toMetricJSON(m *sandbox.Metric) rest.SandboxMetric {
	return rest.SandboxMetric{
		Timestamp: m.Timestamp, TimestampUnix: m.Timestamp.Unix(),
		CPUCount: m.CPUCount, CPUUsedPct: m.CPUUsedPct,
		MemUsed: int64(m.MemUsed), MemTotal: int64(m.MemTotal), MemCache: int64(m.MemCache),
		DiskUsed: int64(m.DiskUsed), DiskTotal: int64(m.DiskTotal),
	}
}

// metrics serves GET /sandboxes/{id}/metrics: the samples of the
// sandbox's history inside [start, end] (unix seconds, both optional), as
// E2B answers; a window with none gives [].
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	from, to, err := metricsWindow(r.URL.Query())
	if err != nil {
		fail(w, r, err)
		return
	}
	samples, err := s.opts.Manager.Metrics(r.Context(), r.PathValue("id"), from, to)
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.SandboxMetric, 0, len(samples))
	for i := range samples {
		out = append(out, toMetricJSON(&samples[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

// metricsWindow reads start and end; an absent bound is open.
func metricsWindow(q url.Values) (from, to int64, err error) {
	from, to = math.MinInt64, math.MaxInt64
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"start", &from}, {"end", &to}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n < 0 {
			return 0, 0, invalid(fmt.Sprintf("%s must be a unix time in whole seconds, not %q", p.name, v))
		}
		*p.dst = n
	}
	if from > to {
		return 0, 0, invalid(fmt.Sprintf("start (%d) is after end (%d)", from, to))
	}
	return from, to, nil
}

// batchMetrics serves GET /sandboxes/metrics?sandbox_ids=a,b: each
// sandbox's newest sample; unknown ones, and paused ones never sampled,
// are left out.
func (s *Server) batchMetrics(w http.ResponseWriter, r *http.Request) {
	ids := strings.Split(r.URL.Query().Get("sandbox_ids"), ",")
	if len(ids) > 100 {
		fail(w, r, invalid(fmt.Sprintf("at most 100 sandbox_ids, got %d", len(ids))))
		return
	}
	out := map[string]rest.SandboxMetric{}
	for _, id := range ids {
		if id == "" {
			continue
		}
		if sb, err := s.opts.Manager.Get(r.Context(), id); err == nil && !owns(r, sb.TeamID) {
			continue
		}
		m, ok, err := s.opts.Manager.LatestMetric(r.Context(), id)
		if errdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			fail(w, r, err)
			return
		}
		if ok {
			out[id] = toMetricJSON(m)
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"sandboxes": out})
}
