package warren

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/api/wire"
)

// BuildState is the state of a template build.
type BuildState string

// Build states, as BuildStatus.Status and TemplateBuild.Status report them.
const (
	BuildWaiting  BuildState = "waiting" // requested, its steps not sent yet
	BuildBuilding BuildState = "building"
	BuildReady    BuildState = "ready"
	BuildFailed   BuildState = "error"
)

// BuildRef names a requested build: StartBuild, BuildStatus and WaitBuild
// take its IDs.
type BuildRef struct {
	TemplateID string
	BuildID    string
	// Tags are the tags the build will get when it succeeds.
	Tags []string
}

// BuildOptions are the settings of a requested build; the zero value
// leaves tags and resources to the server (the "default" tag, its default
// CPUs and memory).
type BuildOptions struct {
	Tags               []string
	CPUCount, MemoryMB int
}

// RequestBuild registers a new build of the template name ("name" or
// "name:tag"), creating the template when the name is new. The build
// waits for StartBuild, after UploadFiles of what its COPY steps need.
func (c *Client) RequestBuild(ctx context.Context, name string, o BuildOptions) (*BuildRef, error) {
	body := rest.BuildRequest{Name: name}
	if len(o.Tags) > 0 {
		body.Tags = &o.Tags
	}
	if o.CPUCount > 0 {
		body.CPUCount = &o.CPUCount
	}
	if o.MemoryMB > 0 {
		body.MemoryMB = &o.MemoryMB
	}
	resp, err := c.api.RequestBuildWithResponse(ctx, body)
	if err := answer(resp, err, http.StatusAccepted); err != nil {
		return nil, fmt.Errorf("requesting build of %s: %w", name, err)
	}
	return &BuildRef{TemplateID: resp.JSON202.TemplateID, BuildID: resp.JSON202.BuildID, Tags: resp.JSON202.Tags}, nil
}

// FilesLink says whether the server has a COPY step's files (by their
// hash) and, when it has not, where to upload them.
type FilesLink struct {
	Present bool
	// URL is where UploadFiles sends the files: on the API (relative or
	// not) or a pre-signed storage URL.
	URL     string
	Headers map[string]string
}

// GetTemplateFiles asks whether the files with this hash (a COPY step's
// FilesHash) are stored for the template, and if not where they go.
func (c *Client) GetTemplateFiles(ctx context.Context, templateID, hash string) (FilesLink, error) {
	resp, err := c.api.TemplateFilesLinkWithResponse(ctx, templateID, hash)
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return FilesLink{}, fmt.Errorf("getting upload link for %s: %w", hash, err)
	}
	l := resp.JSON201
	out := FilesLink{Present: l.Present, URL: deref(l.URL)}
	if l.Headers != nil {
		out.Headers = *l.Headers
	}
	return out, nil
}

// UploadFiles PUTs size bytes of body (a COPY step's files as a gzip tar)
// to a link TemplateFiles gave. A relative URL is on the API and gets the
// API key; an absolute one (signed) is used as it is, without the key.
func (c *Client) UploadFiles(ctx context.Context, link FilesLink, body io.Reader, size int64) error {
	target, err := url.Parse(link.URL)
	if err != nil {
		return fmt.Errorf("uploading files: the upload URL: %w", err)
	}
	own := !target.IsAbs()
	if own {
		target, err = url.Parse(c.cfg.APIURL + "/" + strings.TrimLeft(link.URL, "/"))
		if err != nil {
			return fmt.Errorf("uploading files: the upload URL: %w", err)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, target.String(), body)
	if err != nil {
		return fmt.Errorf("uploading files: %w", err)
	}
	for k, v := range link.Headers {
		if !strings.EqualFold(k, "Content-Length") {
			req.Header.Set(k, v)
		}
	}
	if own {
		req.Header.Set("X-API-KEY", c.cfg.APIKey)
	}
	// An exact length, as E2B's SDK sends: signed storage URLs refuse
	// chunked uploads.
	req.ContentLength = size
	resp, err := c.cfg.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("uploading files: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("uploading files: %w", httpError(resp))
	}
	return nil
}

// StartBuild sends a requested build its definition (base, steps, start
// and ready commands) and starts it; follow it with WaitBuild.
// BuildDockerfile makes the definition from a Dockerfile.
func (c *Client) StartBuild(ctx context.Context, templateID, buildID string, spec rest.BuildStart) error {
	b, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("starting build %s: %w", buildID, err)
	}
	return c.startBuild(ctx, templateID, buildID, b)
}

func (c *Client) startBuild(ctx context.Context, templateID, buildID string, spec []byte) error {
	resp, err := c.api.StartBuildWithBodyWithResponse(ctx, templateID, buildID, "application/json", bytes.NewReader(spec))
	if err := answer(resp, err, http.StatusAccepted); err != nil {
		return fmt.Errorf("starting build %s: %w", buildID, err)
	}
	return nil
}

// BuildLogEntry is one line of a build's log: Level is "debug", "info",
// "warn" or "error"; Step is the build step the line belongs to ("base",
// "finalize" or a step number).
type BuildLogEntry = wire.BuildLogEntry

// BuildStatus is a build's state and a page of its log.
type BuildStatus struct {
	TemplateID, BuildID string
	Status              BuildState
	// LogEntries are the log lines from the requested offset on.
	LogEntries []BuildLogEntry
	// Reason says why a failed build failed: a message and, when the
	// server tells, the step (a number counting the base image as 0).
	Reason, ReasonStep string
}

// buildLogEntries never answers nil, so callers can range and append.
func buildLogEntries(in []BuildLogEntry) []BuildLogEntry {
	if in == nil {
		return []BuildLogEntry{}
	}
	return in
}

// BuildStatus returns a build's state and its log lines from logsOffset
// (the number of lines already read) on, at most the server's page (100).
func (c *Client) GetBuildStatus(ctx context.Context, templateID, buildID string, logsOffset int) (*BuildStatus, error) {
	resp, err := c.api.GetBuildStatusWithResponse(ctx, templateID, buildID, &rest.GetBuildStatusParams{LogsOffset: &logsOffset})
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, fmt.Errorf("getting status of build %s: %w", buildID, err)
	}
	st := resp.JSON200
	out := &BuildStatus{TemplateID: st.TemplateID, BuildID: st.BuildID, Status: BuildState(st.Status), LogEntries: buildLogEntries(st.LogEntries)}
	if st.Reason != nil {
		out.Reason, out.ReasonStep = st.Reason.Message, deref(st.Reason.Step)
	}
	return out, nil
}

// BuildLogsOptions pick lines of a build's log; the zero value is the
// first page, oldest first.
type BuildLogsOptions struct {
	// Cursor starts the page at this time (zero: at the start, or with
	// Backward at the end).
	Cursor time.Time
	// Limit is the page size (0: the server's, 100).
	Limit int
	// Backward pages from newest to oldest.
	Backward bool
	// Level keeps lines at this level or above ("": all).
	Level string
}

// GetBuildLogs returns a page of a build's log, running or finished.
func (c *Client) GetBuildLogs(ctx context.Context, templateID, buildID string, o BuildLogsOptions) ([]BuildLogEntry, error) {
	dir := rest.GetBuildLogsParamsDirectionForward
	if o.Backward {
		dir = rest.GetBuildLogsParamsDirectionBackward
	}
	p := rest.GetBuildLogsParams{Direction: &dir}
	if !o.Cursor.IsZero() {
		ms := o.Cursor.UnixMilli()
		p.Cursor = &ms
	}
	if o.Limit > 0 {
		p.Limit = &o.Limit
	}
	if o.Level != "" {
		lvl := rest.LogLevel(o.Level)
		p.Level = &lvl
	}
	resp, err := c.api.GetBuildLogsWithResponse(ctx, templateID, buildID, &p)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, fmt.Errorf("getting logs of build %s: %w", buildID, err)
	}
	return buildLogEntries(resp.JSON200.Logs), nil
}

// CancelBuild stops a build that has not finished (warren); it ends
// failed. A build that is over is ErrConflict.
func (c *Client) CancelBuild(ctx context.Context, templateID, buildID string) error {
	resp, err := c.api.CancelBuildWithResponse(ctx, templateID, buildID)
	if err := answer(resp, err, http.StatusNoContent); err != nil {
		return fmt.Errorf("cancelling build %s: %w", buildID, err)
	}
	return nil
}
