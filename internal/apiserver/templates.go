package apiserver

import (
	"context"
	"fmt"
	"net/http"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

func toTemplateJSON(t *store.Template) rest.Template {
	aliases := nonNil(t.Aliases)
	status := rest.BuildStateReady
	if t.RootfsPath == "" {
		status = rest.BuildStateBuilding
	}
	out := rest.Template{
		TemplateID: t.ID, BuildID: t.BuildID, CPUCount: t.CPUCount, MemoryMB: t.MemoryMB,
		DiskSizeMB: t.DiskMB, Public: t.Public, Aliases: aliases, Names: aliases,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, EnvdVersion: sandbox.EnvdVersion,
		BuildStatus: status, StartCmd: optional(t.StartCmd),
	}
	if t.SizeBytes != 0 {
		out.SizeBytes = &t.SizeBytes
	}
	if len(t.Labels) > 0 {
		labels := rest.StringMap(t.Labels)
		out.Labels = &labels
	}
	return out
}

// withBuilds adds the template's builds (newest first) and the latest
// build's status.
func (s *Server) withBuilds(ctx context.Context, t *store.Template, full bool) (rest.Template, error) {
	out := toTemplateJSON(t)
	builds, err := s.opts.Store.ListBuilds(ctx, t.ID)
	if err != nil {
		return out, err
	}
	if len(builds) > 0 && t.RootfsPath == "" {
		out.BuildStatus = rest.BuildState(builds[0].Status)
	}
	if !full {
		return out, nil
	}
	list := []rest.TemplateBuild{}
	out.Builds = &list
	for _, b := range builds {
		j := rest.TemplateBuild{BuildID: b.ID, Status: rest.BuildState(b.Status), CreatedAt: b.CreatedAt, UpdatedAt: b.CreatedAt,
			CPUCount: b.CPUCount, MemoryMB: b.MemoryMB, Tags: nonNil(b.Tags), Reason: optional(b.Reason)}
		if !b.FinishedAt.IsZero() {
			f := b.FinishedAt
			j.FinishedAt, j.UpdatedAt = &f, f
		}
		list = append(list, j)
	}
	return out, nil
}

// listTemplates serves GET /templates and GET /v2/templates.
func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request) {
	all, err := s.opts.Store.ListTemplates(r.Context())
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]rest.Template, 0, len(all))
	for _, t := range all {
		if !sees(r, t) {
			continue
		}
		j, err := s.withBuilds(r.Context(), t, false)
		if err != nil {
			fail(w, r, err)
			return
		}
		out = append(out, j)
	}
	writeJSON(w, http.StatusOK, out)
}

// getTemplate serves GET /templates/{id} (id, alias or "name:tag"), with
// its builds.
func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request) {
	t, err := s.visibleTemplate(r, r.PathValue("id"))
	if err != nil {
		fail(w, r, err)
		return
	}
	j, err := s.withBuilds(r.Context(), t, true)
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, j)
}

// templateAlias serves GET /templates/aliases/{alias}, which Template.exists
// uses: 200 when the alias exists, 404 when not.
func (s *Server) templateAlias(w http.ResponseWriter, r *http.Request, alias string) {
	t, err := s.opts.Store.GetTemplate(r.Context(), alias)
	if err == nil && !sees(r, t) {
		err = errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("template '%s' not found", alias))
	}
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, rest.TemplateAlias{TemplateID: t.ID, Public: t.Public})
}
