package tplclient

import (
	"context"
	"errors"
	"fmt"
	"github.com/warren-sandbox/warren/internal/wire"
	"net/http"
)

// List returns the team's templates (GET /templates).
func (c *Client) List(ctx context.Context) ([]wire.Template, error) {
	var out []wire.Template
	if err := c.call(ctx, http.MethodGet, "/templates", nil, nil, &out); err != nil {
		return nil, fmt.Errorf("listing templates: %w", err)
	}
	return out, nil
}

// Get returns a template and its builds by ID or name (GET /templates/{id}).
func (c *Client) Get(ctx context.Context, idOrAlias string) (*wire.Template, error) {
	var out wire.Template
	if err := c.call(ctx, http.MethodGet, apiPath("templates", idOrAlias), nil, nil, &out); err != nil {
		return nil, fmt.Errorf("getting template %s: %w", idOrAlias, err)
	}
	return &out, nil
}

// Delete removes a template (DELETE /templates/{id}). A missing one is an
// error IsNotFound recognizes.
func (c *Client) Delete(ctx context.Context, id string) error {
	if err := c.call(ctx, http.MethodDelete, apiPath("templates", id), nil, nil, nil); err != nil {
		return fmt.Errorf("deleting template %s: %w", id, err)
	}
	return nil
}

// AssignTags points tags at the build target names ("name:tag", or "name"
// for its default tag) (POST /templates/tags).
func (c *Client) AssignTags(ctx context.Context, target string, tags []string) (*wire.TagAssignment, error) {
	in := struct {
		Target string   `json:"target"`
		Tags   []string `json:"tags"`
	}{target, tags}
	var out wire.TagAssignment
	if err := c.call(ctx, http.MethodPost, "/templates/tags", nil, in, &out); err != nil {
		return nil, fmt.Errorf("tagging %s: %w", target, err)
	}
	return &out, nil
}

// RemoveTags removes tags from template name (DELETE /templates/tags).
func (c *Client) RemoveTags(ctx context.Context, name string, tags []string) error {
	in := struct {
		Name string   `json:"name"`
		Tags []string `json:"tags"`
	}{name, tags}
	if err := c.call(ctx, http.MethodDelete, "/templates/tags", nil, in, nil); err != nil {
		return fmt.Errorf("removing tags from %s: %w", name, err)
	}
	return nil
}

// Tags lists a template's tags (GET /templates/{id}/tags).
func (c *Client) Tags(ctx context.Context, id string) ([]wire.Tag, error) {
	var out []wire.Tag
	if err := c.call(ctx, http.MethodGet, apiPath("templates", id, "tags"), nil, nil, &out); err != nil {
		return nil, fmt.Errorf("listing tags of %s: %w", id, err)
	}
	return out, nil
}

// Exists reports whether a template name is taken, by anyone: the API
// answers 403 for a name another team owns (GET /templates/aliases/{alias}).
func (c *Client) Exists(ctx context.Context, alias string) (bool, error) {
	err := c.call(ctx, http.MethodGet, apiPath("templates", "aliases", alias), nil, nil, nil)
	var ae *APIError
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &ae) && ae.StatusCode == http.StatusForbidden:
		return true, nil
	case errors.As(err, &ae) && ae.StatusCode == http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("checking template name %s: %w", alias, err)
}
