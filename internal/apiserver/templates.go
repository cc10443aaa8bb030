package apiserver

import (
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

type templateJSON struct {
	TemplateID  string    `json:"templateID"`
	BuildID     string    `json:"buildID"`
	CPUCount    int       `json:"cpuCount"`
	MemoryMB    int       `json:"memoryMB"`
	DiskSizeMB  int       `json:"diskSizeMB"`
	Public      bool      `json:"public"`
	Aliases     []string  `json:"aliases"`
	Names       []string  `json:"names"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	EnvdVersion string    `json:"envdVersion"`
	BuildStatus string    `json:"buildStatus"`
}

func toTemplateJSON(t *store.Template) templateJSON {
	aliases := t.Aliases
	if aliases == nil {
		aliases = []string{}
	}
	return templateJSON{
		TemplateID: t.ID, BuildID: t.BuildID, CPUCount: t.CPUCount, MemoryMB: t.MemoryMB,
		DiskSizeMB: t.DiskMB, Public: t.Public, Aliases: aliases, Names: aliases,
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, EnvdVersion: sandbox.EnvdVersion,
		BuildStatus: "ready",
	}
}

// listTemplates serves GET /templates and GET /v2/templates.
func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request) {
	all, err := s.opts.Store.ListTemplates(r.Context())
	if err != nil {
		fail(w, r, err)
		return
	}
	out := make([]templateJSON, 0, len(all))
	for _, t := range all {
		out = append(out, toTemplateJSON(t))
	}
	writeJSON(w, http.StatusOK, out)
}

// getTemplate serves GET /templates/{id} (id or alias).
func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request) {
	t, err := s.opts.Store.GetTemplate(r.Context(), r.PathValue("id"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toTemplateJSON(t))
}

// templateAlias serves GET /templates/aliases/{alias}, which Template.exists
// uses: 200 when the alias exists, 404 when not.
func (s *Server) templateAlias(w http.ResponseWriter, r *http.Request) {
	t, err := s.opts.Store.GetTemplate(r.Context(), r.PathValue("alias"))
	if err != nil {
		fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"templateID": t.ID, "public": t.Public})
}
