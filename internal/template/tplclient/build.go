package tplclient

import (
	"context"
	"fmt"
	"github.com/warren-sandbox/warren/internal/wire"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// BuildRef names a requested build.
type BuildRef struct {
	TemplateID string
	BuildID    string
	Tags       []string
}

// RequestBuild asks for a new build of template name (POST /v3/templates).
// Zero cpu or memMB leaves the choice to the server.
func (c *Client) RequestBuild(ctx context.Context, name string, tags []string, cpu, memMB int) (*BuildRef, error) {
	in := wire.BuildRequest{Name: name, Tags: tags, CPUCount: cpu, MemoryMB: memMB}
	var out wire.BuildRequested
	if err := c.call(ctx, http.MethodPost, "/v3/templates", nil, in, &out); err != nil {
		return nil, fmt.Errorf("requesting build of %s: %w", name, err)
	}
	return &BuildRef{TemplateID: out.TemplateID, BuildID: out.BuildID, Tags: out.Tags}, nil
}

// FileLink asks whether the files with this hash are already on the server
// and, if not, where to upload them (GET /templates/{id}/files/{hash}).
func (c *Client) FileLink(ctx context.Context, templateID, hash string) (present bool, uploadURL string, headers map[string]string, err error) {
	var out wire.FileLink
	if err := c.call(ctx, http.MethodGet, apiPath("templates", templateID, "files", hash), nil, nil, &out); err != nil {
		return false, "", nil, fmt.Errorf("getting upload link for %s: %w", hash, err)
	}
	return out.Present, out.URL, out.Headers, nil
}

// Upload PUTs size bytes of body to a URL FileLink returned. A relative URL
// is on this API, so it gets the API key; an absolute one (a pre-signed
// storage URL, as E2B returns) is used as it is, without the key.
func (c *Client) Upload(ctx context.Context, uploadURL string, headers map[string]string, body io.Reader, size int64) error {
	u, err := url.Parse(uploadURL)
	if err != nil {
		return fmt.Errorf("upload URL %q: %w", uploadURL, err)
	}
	own := !u.IsAbs()
	if own {
		if !strings.HasPrefix(uploadURL, "/") {
			uploadURL = "/" + uploadURL
		}
		uploadURL = c.base + uploadURL
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, uploadURL, body)
	if err != nil {
		return fmt.Errorf("uploading files: %w", err)
	}
	for k, v := range headers {
		if !strings.EqualFold(k, "Content-Length") {
			req.Header.Set(k, v)
		}
	}
	if own {
		req.Header.Set("X-API-Key", c.apiKey)
	}
	// The SDK sends an exact length too: signed storage URLs refuse
	// chunked uploads.
	req.ContentLength = size
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("uploading files: %w", err)
	}
	defer resp.Body.Close()
	if err := checkStatus(resp); err != nil {
		return fmt.Errorf("uploading files: %w", err)
	}
	return nil
}

// StartBuild sends the template definition and starts the build
// (POST /v2/templates/{id}/builds/{build}).
func (c *Client) StartBuild(ctx context.Context, templateID, buildID string, req *wire.BuildStart) error {
	if err := c.call(ctx, http.MethodPost, apiPath("v2", "templates", templateID, "builds", buildID), nil, req, nil); err != nil {
		return fmt.Errorf("starting build %s: %w", buildID, err)
	}
	return nil
}

// Status gets a build's state with the log entries from logsOffset on
// (GET /templates/{id}/builds/{build}/status).
func (c *Client) Status(ctx context.Context, templateID, buildID string, logsOffset int) (*wire.BuildStatus, error) {
	q := url.Values{"logsOffset": {strconv.Itoa(logsOffset)}}
	var st wire.BuildStatus
	if err := c.call(ctx, http.MethodGet, apiPath("templates", templateID, "builds", buildID, "status"), q, nil, &st); err != nil {
		return nil, fmt.Errorf("getting status of build %s: %w", buildID, err)
	}
	return &st, nil
}
