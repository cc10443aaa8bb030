package apiserver

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
)

// maxSandboxLogs is the most entries one sandbox logs request returns
// (E2B's v2 maximum; v1 has none, warren caps it the same).
const maxSandboxLogs = 1000

// maxLogSearch is E2B's longest search string.
const maxLogSearch = 256

func toLogJSON(e sandboxlog.Entry) rest.SandboxLog {
	f := e.Fields
	if f == nil {
		f = map[string]string{}
	}
	return rest.SandboxLog{Timestamp: e.Timestamp, Level: rest.LogLevel(e.Level), Message: e.Message, Fields: f}
}

// sandboxLogsV1 serves the deprecated GET /sandboxes/{id}/logs: up to
// `limit` entries from `start` (ms) on, oldest first, each both as its raw
// line and as an entry.
func (s *Server) sandboxLogsV1(w http.ResponseWriter, r *http.Request) {
	vals := r.URL.Query()
	start, err1 := queryInt(vals, "start", -1)
	limit, err2 := queryInt(vals, "limit", maxSandboxLogs)
	if err := firstErr(err1, err2); err != nil {
		fail(w, r, err)
		return
	}
	q := sandboxlog.Query{Limit: int(min(limit, maxSandboxLogs))}
	if start >= 0 {
		q.Cursor = time.UnixMilli(start)
	}
	entries, err := s.opts.Manager.Logs(r.Context(), r.PathValue("id"), q)
	if err != nil {
		fail(w, r, err)
		return
	}
	lines, logs := []rest.SandboxLogLine{}, []rest.SandboxLog{}
	for _, e := range entries {
		lines = append(lines, rest.SandboxLogLine{Timestamp: e.Timestamp, Line: e.Raw})
		logs = append(logs, toLogJSON(e))
	}
	writeJSON(w, http.StatusOK, map[string]any{"logs": lines, "logEntries": logs})
}

// sandboxLogsV2 serves GET /v2/sandboxes/{id}/logs: entries by cursor
// (ms), direction, lowest level and message substring.
func (s *Server) sandboxLogsV2(w http.ResponseWriter, r *http.Request) {
	q, err := logQuery(r.URL.Query(), maxSandboxLogs)
	if err != nil {
		fail(w, r, err)
		return
	}
	if q.Search = r.URL.Query().Get("search"); len(q.Search) > maxLogSearch {
		fail(w, r, invalid(fmt.Sprintf("search may be at most %d characters", maxLogSearch)))
		return
	}
	entries, err := s.opts.Manager.Logs(r.Context(), r.PathValue("id"), q)
	if err != nil {
		fail(w, r, err)
		return
	}
	logs := []rest.SandboxLog{}
	for _, e := range entries {
		logs = append(logs, toLogJSON(e))
	}
	writeJSON(w, http.StatusOK, map[string]any{"logs": logs})
}

// logQuery reads the query E2B's v2 sandbox logs and build logs share:
// cursor (ms), limit (default and maximum maxLimit), direction (forward or
// backward) and level.
func logQuery(vals url.Values, maxLimit int) (sandboxlog.Query, error) {
	cursor, err1 := queryInt(vals, "cursor", -1)
	limit, err2 := queryInt(vals, "limit", int64(maxLimit))
	if err := firstErr(err1, err2); err != nil {
		return sandboxlog.Query{}, err
	}
	if limit > int64(maxLimit) {
		return sandboxlog.Query{}, invalid(fmt.Sprintf("limit may be at most %d", maxLimit))
	}
	q := sandboxlog.Query{Limit: int(limit), Level: vals.Get("level")}
	if cursor >= 0 {
		q.Cursor = time.UnixMilli(cursor)
	}
	switch vals.Get("direction") {
	case "", "forward":
	case "backward":
		q.Backward = true
	default:
		return q, invalid(fmt.Sprintf("direction %q is neither forward nor backward", vals.Get("direction")))
	}
	if q.Level != "" && !sandboxlog.ValidLevel(q.Level) {
		return q, invalid(fmt.Sprintf("level %q is not one of debug, info, warn, error", q.Level))
	}
	return q, nil
}

// queryInt reads a non-negative integer query parameter, def when absent.
func queryInt(vals url.Values, name string, def int64) (int64, error) {
	v := vals.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("%s must be a non-negative integer, got %q", name, v))
	}
	return n, nil
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
