package apiserver

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// metricJSON is E2B's SandboxMetric; every key is required by the PY SDK.
type metricJSON struct {
	Timestamp     time.Time `json:"timestamp"`
	TimestampUnix int64     `json:"timestampUnix"`
	CPUCount      int       `json:"cpuCount"`
	CPUUsedPct    float64   `json:"cpuUsedPct"`
	MemUsed       uint64    `json:"memUsed"`
	MemTotal      uint64    `json:"memTotal"`
	MemCache      uint64    `json:"memCache"`
	DiskUsed      uint64    `json:"diskUsed"`
	DiskTotal     uint64    `json:"diskTotal"`
}

func toMetricJSON(m *sandbox.Metric) metricJSON {
	return metricJSON{
		Timestamp: m.Timestamp, TimestampUnix: m.Timestamp.Unix(),
		CPUCount: m.CPUCount, CPUUsedPct: m.CPUUsedPct,
		MemUsed: m.MemUsed, MemTotal: m.MemTotal, MemCache: m.MemCache,
		DiskUsed: m.DiskUsed, DiskTotal: m.DiskTotal,
	}
}

// metrics serves GET /sandboxes/{id}/metrics with a sample taken now; warren
// keeps no history, so start/end only validate.
func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	m, err := s.opts.Manager.Metrics(r.Context(), r.PathValue("id"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, []metricJSON{toMetricJSON(m)})
}

// batchMetrics serves GET /sandboxes/metrics?sandbox_ids=a,b.
func (s *Server) batchMetrics(w http.ResponseWriter, r *http.Request) {
	ids := strings.Split(r.URL.Query().Get("sandbox_ids"), ",")
	if len(ids) > 100 {
		fail(w, r, invalid(fmt.Sprintf("at most 100 sandbox_ids, got %d", len(ids))))
		return
	}
	out := map[string]metricJSON{}
	for _, id := range ids {
		if id == "" {
			continue
		}
		m, err := s.opts.Manager.Metrics(r.Context(), id)
		if errdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			fail(w, r, err)
			return
		}
		out[id] = toMetricJSON(m)
	}
	writeJSON(w, http.StatusOK, map[string]any{"sandboxes": out})
}
