package apiserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/builder"
)

// requestBuild serves POST /v3/templates: it creates the template when the
// name is new and records a build waiting for its steps.
func (s *Server) requestBuild(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	var body rest.BuildRequest
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	cpus, memMB := deref(body.CPUCount), deref(body.MemoryMB)
	if cpus > s.opts.MaxCPUCount && s.opts.MaxCPUCount > 0 || memMB > s.opts.MaxMemoryMB && s.opts.MaxMemoryMB > 0 {
		fail(w, r, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("cpuCount and memoryMB may be at most %d and %d on this server", s.opts.MaxCPUCount, s.opts.MaxMemoryMB)))
		return
	}
	tpl, bl, err := s.opts.Builder.RequestBuild(r.Context(), builder.BuildRequest{
		Name: body.Name, Tags: deref(body.Tags), CPUCount: cpus, MemoryMB: memMB, MinFreeDiskMB: body.MinFreeDiskMb,
		TeamID: teamOf(r), AnyTeam: isAdmin(r),
	})
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, rest.BuildRequested{
		TemplateID: tpl.ID, BuildID: bl.ID, Public: tpl.Public,
		Names: nonNil(tpl.Aliases), Aliases: nonNil(tpl.Aliases), Tags: nonNil(bl.Tags),
	})
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// canBuild answers 501 on servers that run no builder.
func (s *Server) canBuild(w http.ResponseWriter, r *http.Request) bool {
	if s.opts.Builder == nil {
		fail(w, r, errdefs.New(errdefs.ErrNotImplemented, "this server does not build templates"))
		return false
	}
	return true
}

// startBuild serves POST /v2/templates/{templateID}/builds/{buildID}.
func (s *Server) startBuild(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	var req wire.BuildStart
	if err := decode(r, &req, false); err != nil {
		fail(w, r, err)
		return
	}
	if err := s.opts.Builder.Start(r.Context(), r.PathValue("templateID"), r.PathValue("buildID"), &req); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusAccepted)
}

// cancelBuild serves POST /templates/{templateID}/builds/{buildID}/cancel
// (warren): the build ends in the error state.
func (s *Server) cancelBuild(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	bl, err := s.opts.Store.GetBuild(r.Context(), r.PathValue("buildID"))
	if err != nil || bl.TemplateID != r.PathValue("templateID") {
		fail(w, r, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("build '%s' not found", r.PathValue("buildID"))))
		return
	}
	if !s.opts.Builder.Cancel(bl.ID) {
		fail(w, r, errdefs.New(errdefs.ErrConflict, fmt.Sprintf("build '%s' is not running (it is %s)", bl.ID, bl.Status)))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// buildStatus serves GET /templates/{templateID}/builds/{buildID}/status:
// the state and up to `limit` (≤100) log lines from logsOffset.
func (s *Server) buildStatus(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	q := r.URL.Query()
	offset, err1 := atoiDefault(q.Get("logsOffset"), 0)
	limit, err2 := atoiDefault(q.Get("limit"), 100)
	if err1 != nil || err2 != nil || offset < 0 || limit < 0 || limit > 100 {
		fail(w, r, errdefs.New(errdefs.ErrInvalidArgument, "logsOffset must be ≥ 0 and limit between 0 and 100"))
		return
	}
	bl, err := s.opts.Store.GetBuild(r.Context(), r.PathValue("buildID"))
	if err != nil || bl.TemplateID != r.PathValue("templateID") {
		fail(w, r, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("build '%s' of template '%s' not found", r.PathValue("buildID"), r.PathValue("templateID"))))
		return
	}
	entries, err := s.opts.Builder.Logs(bl.ID, offset)
	if err != nil {
		fail(w, r, err)
		return
	}
	entries = filterLevel(entries, q.Get("level"))
	if len(entries) > limit {
		entries = entries[:limit]
	}
	if entries == nil {
		entries = []wire.BuildLogEntry{} // logEntries is required: [], not null
	}
	out := rest.BuildStatus{TemplateID: bl.TemplateID, BuildID: bl.ID, Status: rest.BuildState(bl.Status), Logs: []string{}, LogEntries: entries}
	for _, e := range entries {
		out.Logs = append(out.Logs, e.Timestamp.Format(time.RFC3339)+" "+e.Message)
	}
	if bl.Status == store.BuildError {
		out.Reason = &rest.BuildReason{Message: bl.Reason, Step: optional(bl.ReasonStep), LogEntries: []rest.BuildLogEntry{}}
	}
	writeJSON(w, http.StatusOK, out)
}

// filterLevel keeps entries at level or above (debug < info < warn < error).
func filterLevel(entries []wire.BuildLogEntry, level string) []wire.BuildLogEntry {
	rank := map[string]int{"debug": 0, "info": 1, "warn": 2, "error": 3}
	min, ok := rank[level]
	if !ok {
		return entries
	}
	var out []wire.BuildLogEntry
	for _, e := range entries {
		if rank[e.Level] >= min {
			out = append(out, e)
		}
	}
	return out
}

func atoiDefault(s string, def int) (int, error) {
	if s == "" {
		return def, nil
	}
	return strconv.Atoi(s)
}

var _ = json.Marshal
