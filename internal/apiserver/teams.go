package apiserver

import (
	"fmt"
	"net/http"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// Teams: every key belongs to one, and so does what its requests make.
// Another team's sandbox, snapshot, template or build is answered exactly
// as one that does not exist, so ids cannot be probed; the admin key acts
// on every team. Public templates (the built-in ones) are seen by all.

// principal is the key the request authenticated with.
func principal(r *http.Request) *store.APIKey {
	k, _ := r.Context().Value(keyCtx{}).(*store.APIKey)
	return k
}

// teamOf is the team the request acts for.
func teamOf(r *http.Request) string {
	if k := principal(r); k != nil {
		return store.TeamOf(k.TeamID)
	}
	return store.DefaultTeam
}

// isAdmin: the request's key acts on every team.
func isAdmin(r *http.Request) bool {
	k := principal(r)
	return k != nil && k.Admin
}

// owns reports whether the request may act on what team owns.
func owns(r *http.Request, team string) bool {
	return isAdmin(r) || store.TeamOf(team) == teamOf(r)
}

// sees reports whether the request may read template t.
func sees(r *http.Request, t *store.Template) bool { return t.Public || owns(r, t.TeamID) }

// ownSandbox guards a /sandboxes/{id}/... handler: another team's
// sandbox is not found.
func (s *Server) ownSandbox(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		sb, err := s.opts.Manager.Get(r.Context(), id)
		switch {
		case err == nil && !owns(r, sb.TeamID):
			fail(w, r, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id)))
			return
		case err != nil && !errdefs.IsNotFound(err):
			fail(w, r, err)
			return
		}
		// An unknown id goes on: the handler answers it as it always has.
		h(w, r)
	}
}

// ownTemplate guards a /templates/{templateID}/... handler (builds, files,
// tags): only the owning team works on a template's builds.
func (s *Server) ownTemplate(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("templateID")
		if t, err := s.opts.Store.GetTemplate(r.Context(), id); err == nil && !owns(r, t.TeamID) {
			fail(w, r, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("template '%s' not found", id)))
			return
		}
		h(w, r)
	}
}

// visibleTemplate resolves id (an id, alias or name:tag) for reading.
func (s *Server) visibleTemplate(r *http.Request, id string) (*store.Template, error) {
	t, err := store.ResolveTemplate(r.Context(), s.opts.Store, id)
	if err == nil && !sees(r, t) {
		err = errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("template '%s' not found", id))
	}
	return t, err
}

// ownSandboxes lists the sandboxes the request's team owns.
func (s *Server) ownSandboxes(r *http.Request) ([]*store.Sandbox, error) {
	all, err := s.records().List(r.Context())
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, sb := range all {
		if owns(r, sb.TeamID) {
			out = append(out, sb)
		}
	}
	return out, nil
}
