package apiserver

import (
	"fmt"
	"net/http"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandboxlog"
)

// maxBuildLogs is E2B's maximum (and default) limit of build logs.
const maxBuildLogs = 100

// buildLogs serves GET /templates/{templateID}/builds/{buildID}/logs: the
// lines /status gives, picked by cursor (ms), direction, lowest level and
// limit. source only validates: warren keeps one copy of a build's log,
// in memory while it runs and in a file after.
func (s *Server) buildLogs(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	q, err := logQuery(r.URL.Query(), maxBuildLogs)
	if err != nil {
		fail(w, r, err)
		return
	}
	if src := r.URL.Query().Get("source"); src != "" && src != "temporary" && src != "persistent" {
		fail(w, r, invalid(fmt.Sprintf("source %q is neither temporary nor persistent", src)))
		return
	}
	bl, err := s.opts.Store.GetBuild(r.Context(), r.PathValue("buildID"))
	if err != nil || bl.TemplateID != r.PathValue("templateID") {
		fail(w, r, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("build '%s' of template '%s' not found", r.PathValue("buildID"), r.PathValue("templateID"))))
		return
	}
	entries, err := s.opts.Builder.Logs(bl.ID, 0)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"logs": pickBuildLogs(entries, q)})
}

// pickBuildLogs applies q to a build's lines, which are in time order.
func pickBuildLogs(entries []wire.BuildLogEntry, q sandboxlog.Query) []wire.BuildLogEntry {
	out := []wire.BuildLogEntry{}
	for i := range entries {
		if len(out) >= q.Limit {
			break
		}
		e := entries[i]
		if q.Backward {
			e = entries[len(entries)-1-i]
		}
		if q.Matches(e.Timestamp, e.Level, e.Message) {
			out = append(out, e)
		}
	}
	return out
}
