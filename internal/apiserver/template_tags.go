package apiserver

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// assignTags serves POST /templates/tags: {"target": "name[:tag]", "tags"}.
func (s *Server) assignTags(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	var body struct {
		Target string   `json:"target"`
		Tags   []string `json:"tags"`
	}
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	if body.Target == "" || len(body.Tags) == 0 {
		fail(w, r, errdefs.New(errdefs.ErrInvalidArgument, "target and at least one tag are required"))
		return
	}
	if !s.ownsName(w, r, body.Target) {
		return
	}
	buildID, err := s.opts.Builder.AssignTags(r.Context(), body.Target, body.Tags)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, rest.TagAssignment{Tags: body.Tags, BuildID: buildID})
}

// removeTags serves DELETE /templates/tags: {"name", "tags"}.
func (s *Server) removeTags(w http.ResponseWriter, r *http.Request) {
	if !s.canBuild(w, r) {
		return
	}
	var body struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	if body.Name == "" || len(body.Tags) == 0 {
		fail(w, r, errdefs.New(errdefs.ErrInvalidArgument, "name and at least one tag are required"))
		return
	}
	if !s.ownsName(w, r, body.Name) {
		return
	}
	if err := s.opts.Builder.RemoveTags(r.Context(), body.Name, body.Tags); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// templateSub serves GET /templates/aliases/{alias} and
// GET /templates/{templateID}/tags.
func (s *Server) templateSub(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.PathValue("first") == "aliases":
		s.templateAlias(w, r, r.PathValue("second"))
	case r.PathValue("second") == "tags":
		s.listTags(w, r, r.PathValue("first"))
	default:
		writeError(w, http.StatusNotFound, "no route for "+r.Method+" "+r.URL.Path)
	}
}

// listTags serves GET /templates/{templateID}/tags.
func (s *Server) listTags(w http.ResponseWriter, r *http.Request, id string) {
	tpl, err := s.opts.Store.GetTemplate(r.Context(), id)
	if err == nil && !sees(r, tpl) {
		err = errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("template '%s' not found", id))
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	tags, err := s.opts.Store.ListTags(r.Context(), tpl.ID)
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.Tag, 0, len(tags))
	for _, t := range tags {
		out = append(out, rest.Tag{Tag: t.Tag, BuildID: t.BuildID, CreatedAt: t.CreatedAt})
	}
	writeJSON(w, http.StatusOK, out)
}

// ownsName answers 404 (and false) when the template that name ("name" or
// "name:tag") refers to is another team's.
func (s *Server) ownsName(w http.ResponseWriter, r *http.Request, name string) bool {
	base, _, _ := strings.Cut(name, ":")
	if t, err := s.opts.Store.GetTemplate(r.Context(), base); err == nil && !owns(r, t.TeamID) {
		fail(w, r, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("template '%s' not found", base)))
		return false
	}
	return true
}
