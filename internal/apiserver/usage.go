package apiserver

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// Bounds of a usage query: the sampler records a minute at a time, and a
// series longer than maxUsagePoints is more than any chart draws.
const (
	usageMinStep      = time.Minute
	defaultUsageRange = 24 * time.Hour
	defaultUsagePts   = 300
	maxUsagePoints    = 10000
	// maxUsageSeconds bounds times (the year 2106) and steps, so no
	// span or step overflows a time.Duration.
	maxUsageSeconds = 1 << 32
)

// usageQuery is a parsed GET /usage.
type usageQuery struct {
	team       string // "" : every team
	start, end time.Time
	step       time.Duration
}

// usage serves GET /usage: the team's usage over time from the minute
// samples in the store, one point per step (docs in api/openapi.yaml).
func (s *Server) usage(w http.ResponseWriter, r *http.Request) {
	q, err := parseUsage(r, time.Now())
	if err != nil {
		fail(w, r, err)
		return
	}
	totals, err := s.opts.Store.UsageTotals(r.Context(), q.team, q.start, q.end)
	if err != nil {
		fail(w, r, fmt.Errorf("reading usage: %w", err))
		return
	}
	out := rest.UsageSeries{Step: int64(q.step / time.Second), Points: bucketUsage(totals, q)}
	if q.team != "" {
		out.Team = &q.team
	}
	writeJSON(w, http.StatusOK, out)
}

// parseUsage reads start, end, step and team against now. A key reports
// its own team; only the admin key names another, and without one it
// reports every team together.
func parseUsage(r *http.Request, now time.Time) (usageQuery, error) {
	v := r.URL.Query()
	q := usageQuery{team: teamOf(r)}
	if isAdmin(r) {
		q.team = v.Get("team")
	} else if t := v.Get("team"); t != "" && t != q.team {
		return q, errdefs.New(errdefs.ErrPermissionDenied, "only the admin key reads another team's usage")
	}
	end, err := unixParam(v, "end", now)
	if err != nil {
		return q, err
	}
	start, err := unixParam(v, "start", end.Add(-defaultUsageRange))
	if err != nil {
		return q, err
	}
	if !start.Before(end) {
		return q, invalid(fmt.Sprintf("start (%d) must be before end (%d)", start.Unix(), end.Unix()))
	}
	q.start, q.end = start.Truncate(time.Minute), end
	// The default: the shortest whole-minute step giving at most
	// defaultUsagePts points.
	span := q.end.Sub(q.start)
	q.step = max(usageMinStep, (span / defaultUsagePts).Truncate(time.Minute))
	if q.step*defaultUsagePts < span {
		q.step += time.Minute
	}
	if sv := v.Get("step"); sv != "" {
		n, err := strconv.ParseInt(sv, 10, 64)
		if err != nil || n < 60 || n%60 != 0 || n > maxUsageSeconds {
			return q, invalid(fmt.Sprintf("step must be whole minutes in seconds (60, 120, ...), not %q", sv))
		}
		q.step = time.Duration(n) * time.Second
	}
	if points(q) > maxUsagePoints {
		return q, invalid(fmt.Sprintf("%d points of %s: ask for at most %d (a longer step or a shorter range)", points(q), q.step, maxUsagePoints))
	}
	return q, nil
}

// unixParam reads a unix time in whole seconds, or def when it is absent.
func unixParam(v url.Values, name string, def time.Time) (time.Time, error) {
	s := v.Get(name)
	if s == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 || n > maxUsageSeconds {
		return time.Time{}, invalid(fmt.Sprintf("%s must be a unix time in whole seconds, not %q", name, s))
	}
	return time.Unix(n, 0), nil
}

// points is how many steps cover [start, end).
func points(q usageQuery) int {
	span := q.end.Sub(q.start)
	return int((span + q.step - 1) / q.step)
}

// bucketUsage folds minute totals into one point per step from q.start:
// the counts are the step's peak (a chart of them never hides a burst),
// the CPU time its sum. Steps without samples had nothing running.
func bucketUsage(totals []store.UsageSample, q usageQuery) []rest.UsagePoint {
	out := make([]rest.UsagePoint, points(q))
	for i := range out {
		at := q.start.Add(time.Duration(i) * q.step).UTC()
		out[i].Timestamp, out[i].TimestampUnix = at, at.Unix()
	}
	for _, u := range totals {
		i := int(u.At.Sub(q.start) / q.step)
		if i < 0 || i >= len(out) {
			continue
		}
		p := &out[i]
		p.RunningSandboxes = max(p.RunningSandboxes, u.RunningSandboxes)
		p.Vcpus = max(p.Vcpus, u.VCPUs)
		p.MemoryMB = max(p.MemoryMB, u.MemoryMB)
		p.CPUUsedSeconds += u.CPUUsed.Seconds()
	}
	return out
}
