package apiserver

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

func toSnapshotInfo(s *store.Snapshot) rest.SnapshotInfo {
	names := s.Names
	if names == nil {
		names = []string{}
	}
	return rest.SnapshotInfo{SnapshotID: s.ID, Names: names}
}

// createSnapshot serves POST /sandboxes/{id}/snapshots: 201 SnapshotInfo.
func (s *Server) createSnapshot(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name *string `json:"name"`
	}
	if err := decode(r, &body, true); err != nil {
		fail(w, r, err)
		return
	}
	name := ""
	if body.Name != nil {
		name = *body.Name
	}
	snap, err := s.opts.Manager.Snapshot(r.Context(), r.PathValue("id"), name)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toSnapshotInfo(snap))
}

// listSnapshots serves GET /snapshots, newest first, paginated by an
// opaque offset token.
func (s *Server) listSnapshots(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, offset := maxListLimit, 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fail(w, r, invalid("limit must be a positive integer"))
			return
		}
		limit = min(n, maxListLimit)
	}
	if v := q.Get("nextToken"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fail(w, r, invalid("invalid nextToken"))
			return
		}
		offset = n
	}
	all, err := s.records().ListSnapshots(r.Context(), q.Get("sandboxID"), q.Get("name"))
	if err != nil {
		fail(w, r, err)
		return
	}
	own := all[:0]
	for _, sn := range all {
		if owns(r, sn.TeamID) {
			own = append(own, sn)
		}
	}
	all = own
	out := []rest.SnapshotInfo{}
	for i := offset; i < len(all) && len(out) < limit; i++ {
		out = append(out, toSnapshotInfo(all[i]))
	}
	if next := offset + len(out); next < len(all) {
		w.Header().Set("X-Next-Token", strconv.Itoa(next))
	}
	writeJSON(w, http.StatusOK, out)
}

// deleteTemplate serves DELETE /templates/{id}, which the SDKs also use to
// delete snapshots.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	notFound := errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("template or snapshot '%s' not found", id))
	if sn, err := s.opts.Store.GetSnapshot(r.Context(), id); err == nil && !owns(r, sn.TeamID) {
		fail(w, r, notFound)
		return
	}
	if t, err := s.opts.Store.GetTemplate(r.Context(), id); err == nil && !owns(r, t.TeamID) {
		fail(w, r, notFound)
		return
	}
	err := s.opts.Manager.DeleteSnapshot(r.Context(), id)
	if errdefs.IsNotFound(err) {
		if _, terr := s.opts.Store.GetTemplate(r.Context(), id); terr != nil {
			err = errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("template or snapshot '%s' not found", id))
		} else if s.opts.Builder == nil {
			err = errdefs.New(errdefs.ErrNotImplemented, "this server does not manage templates")
		} else {
			err = s.opts.Builder.DeleteTemplate(r.Context(), id)
		}
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
