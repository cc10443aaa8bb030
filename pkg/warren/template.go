package warren

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// Template is a template sandboxes start from, as the server lists it.
type Template struct {
	ID string
	// BuildID is the build sandboxes from the template's default tag get.
	BuildID string
	// Names are what creates may call it by (name, or namespace/name);
	// Aliases are the same names as E2B's older API gives them.
	Names, Aliases []string
	Public         bool
	// BuildStatus is the state of the latest build.
	BuildStatus BuildState
	// The resources of sandboxes from the template, by default.
	CPUCount, MemoryMB, DiskSizeMB int
	EnvdVersion                    string
	StartCmd                       string
	Labels                         map[string]string
	SizeBytes                      int64
	SpawnCount                     int
	CreatedAt, UpdatedAt           time.Time
	// LastSpawnedAt is zero when no sandbox was started from it yet.
	LastSpawnedAt time.Time
	// Builds are the template's builds, newest first; only GetTemplate
	// fills them.
	Builds []TemplateBuild
}

// TemplateBuild is one build of a template.
type TemplateBuild struct {
	ID     string
	Status BuildState
	// Reason says why a failed build failed.
	Reason                         string
	Tags                           []string
	CPUCount, MemoryMB, DiskSizeMB int
	EnvdVersion                    string
	// FinishedAt is zero while the build runs.
	CreatedAt, UpdatedAt, FinishedAt time.Time
}

// Tag is a tag of a template and the build it points at: creates from
// "name:tag" start that build.
type Tag struct {
	Tag       string
	BuildID   string
	CreatedAt time.Time
}

// TagAssignment is what AssignTags did: the build the tags now point at.
type TagAssignment struct {
	BuildID string
	Tags    []string
}

func templateOf(t *rest.Template) Template {
	out := Template{ID: t.TemplateID, BuildID: t.BuildID, Names: t.Names, Aliases: t.Aliases, Public: t.Public,
		BuildStatus: BuildState(t.BuildStatus), CPUCount: t.CPUCount, MemoryMB: t.MemoryMB, DiskSizeMB: t.DiskSizeMB,
		EnvdVersion: t.EnvdVersion, StartCmd: deref(t.StartCmd), SizeBytes: derefOr(t.SizeBytes), SpawnCount: derefOr(t.SpawnCount),
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt, LastSpawnedAt: derefOr(t.LastSpawnedAt)}
	if t.Labels != nil {
		out.Labels = *t.Labels
	}
	if t.Builds != nil {
		for _, b := range *t.Builds {
			out.Builds = append(out.Builds, TemplateBuild{ID: b.BuildID, Status: BuildState(b.Status), Reason: deref(b.Reason),
				Tags: b.Tags, CPUCount: b.CPUCount, MemoryMB: b.MemoryMB, DiskSizeMB: derefOr(b.DiskSizeMB),
				EnvdVersion: deref(b.EnvdVersion), CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt, FinishedAt: derefOr(b.FinishedAt)})
		}
	}
	return out
}

// derefOr is *p, or the zero value for nil.
func derefOr[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// ListTemplates returns the templates the API key may see: its team's and
// the public ones.
func (c *Client) ListTemplates(ctx context.Context) ([]Template, error) {
	resp, err := c.api.ListTemplatesWithResponse(ctx)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, fmt.Errorf("listing templates: %w", err)
	}
	var out []Template
	for _, t := range *resp.JSON200 {
		out = append(out, templateOf(&t))
	}
	return out, nil
}

// GetTemplate returns a template, by ID or name, with its builds.
func (c *Client) GetTemplate(ctx context.Context, idOrName string) (*Template, error) {
	resp, err := c.api.GetTemplateWithResponse(ctx, idOrName)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, fmt.Errorf("getting template %s: %w", idOrName, err)
	}
	t := templateOf(resp.JSON200)
	return &t, nil
}

// DeleteTemplate deletes a template (by ID or name) and its builds; a
// snapshot's ID deletes the snapshot. A missing one is ErrNotFound.
func (c *Client) DeleteTemplate(ctx context.Context, idOrName string) error {
	resp, err := c.api.DeleteTemplateWithResponse(ctx, idOrName)
	if err := answer(resp, err, http.StatusNoContent); err != nil {
		return fmt.Errorf("deleting template %s: %w", idOrName, err)
	}
	return nil
}

// TemplateExists reports whether a template name is taken, by this team
// or another (whose templates the key may not see), as E2B's
// Template.exists does before a build.
func (c *Client) TemplateExists(ctx context.Context, name string) (bool, error) {
	resp, err := c.api.GetTemplateAliasWithResponse(ctx, name)
	err = answer(resp, err, http.StatusOK)
	var apiErr *APIError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusForbidden:
		return true, nil
	case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("checking template name %s: %w", name, err)
}

// ListTemplateTags lists a template's tags and the builds they point at.
func (c *Client) ListTemplateTags(ctx context.Context, idOrName string) ([]Tag, error) {
	resp, err := c.api.ListTemplateTagsWithResponse(ctx, idOrName)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, fmt.Errorf("listing tags of %s: %w", idOrName, err)
	}
	var out []Tag
	for _, t := range *resp.JSON200 {
		out = append(out, Tag{Tag: t.Tag, BuildID: t.BuildID, CreatedAt: t.CreatedAt})
	}
	return out, nil
}

// AssignTags points tags at the build target names: "name:tag" (the
// build that tag points at) or "name" (its default tag's build). A tag
// that pointed elsewhere moves.
func (c *Client) AssignTags(ctx context.Context, target string, tags []string) (TagAssignment, error) {
	resp, err := c.api.AssignTemplateTagsWithResponse(ctx, rest.AssignTemplateTagsJSONRequestBody{Target: target, Tags: tags})
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return TagAssignment{}, fmt.Errorf("tagging %s: %w", target, err)
	}
	return TagAssignment{BuildID: resp.JSON201.BuildID, Tags: resp.JSON201.Tags}, nil
}

// RemoveTags removes tags from the template name; the builds stay.
func (c *Client) RemoveTags(ctx context.Context, name string, tags []string) error {
	resp, err := c.api.RemoveTemplateTagsWithResponse(ctx, rest.RemoveTemplateTagsJSONRequestBody{Name: name, Tags: tags})
	if err := answer(resp, err, http.StatusNoContent); err != nil {
		return fmt.Errorf("removing tags from %s: %w", name, err)
	}
	return nil
}
