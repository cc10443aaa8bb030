package warren

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api/gen/filesystem/filesystemconnect"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
	"github.com/warren-sandbox/warren/api/rest"
)

// Sandbox is a running sandbox as a create or connect returns it.
type Sandbox struct {
	ID         string
	TemplateID string
	// EnvdAccessToken is what envd inside asks for (secure sandboxes).
	EnvdAccessToken string
	// TrafficAccessToken is what the sandbox's other ports ask for when
	// its public traffic is off.
	TrafficAccessToken string
	// Domain is where the sandbox answers: <port>-<id>.<domain>.
	Domain string

	// Commands runs processes, Files reads and writes the filesystem and
	// Pty opens terminals, all through envd inside the sandbox.
	Commands *Commands
	Files    *Files
	Pty      *Pty

	client *Client
}

// CreateOptions are a create's settings; the zero value takes the
// template's and the server's defaults.
type CreateOptions struct {
	// Timeout is how long the sandbox lives (default 15 s on E2B's API;
	// whole seconds).
	Timeout  time.Duration
	Metadata map[string]string
	EnvVars  map[string]string
	// AutoPause pauses instead of killing at the timeout.
	AutoPause bool
	// NoInternet turns egress to the internet off.
	NoInternet bool
	// Network, when set, adds egress rules (see UpdateNetwork).
	Network *Network
	// CPUCount and MemoryMB override the template's (warren), within the
	// server's maximums.
	CPUCount, MemoryMB int
	// IdempotencyKey makes the create safe to send again: the server
	// answers a retry with the same key (and the same options) with the
	// sandbox the first made, never a second one. Keys are per team and
	// kept 24 h; 1 to 255 visible ASCII characters (a UUID). Empty: the
	// SDK makes a random one, so its own retries are safe; set one to
	// make the create safe across restarts of your program too.
	IdempotencyKey string
	// VolumeMounts mounts the team's volumes, read-write, each at its
	// path; a volume may be mounted in many sandboxes at once.
	VolumeMounts []VolumeMount
}

// Create starts a sandbox from a template (an id, a name or name:tag) or a
// snapshot. envd always asks for the returned access token.
func (c *Client) Create(ctx context.Context, template string, o CreateOptions) (*Sandbox, error) {
	body := rest.NewSandbox{TemplateID: template}
	body.Timeout = seconds(o.Timeout)
	if len(o.Metadata) > 0 {
		m := rest.StringMap(o.Metadata)
		body.Metadata = &m
	}
	if len(o.EnvVars) > 0 {
		m := rest.StringMap(o.EnvVars)
		body.EnvVars = &m
	}
	if o.AutoPause {
		body.AutoPause = &o.AutoPause
	}
	if o.NoInternet {
		f := false
		body.AllowInternetAccess = &f
	}
	if n := o.Network; n != nil {
		body.Network = &rest.SandboxNetwork{AllowOut: nonEmpty(n.AllowOut), DenyOut: nonEmpty(n.DenyOut)}
	}
	if o.CPUCount > 0 {
		body.CPUCount = &o.CPUCount
	}
	if o.MemoryMB > 0 {
		body.MemoryMB = &o.MemoryMB
	}
	body.VolumeMounts = restMounts(o.VolumeMounts)
	// A key of its own makes the create safe to retry after a 429 or 503.
	key := o.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey()
	}
	params := rest.CreateSandboxV2Params{IdempotencyKey: &key}
	resp, err := c.api.CreateSandboxV2WithResponse(ctx, &params, body)
	if err := answer(resp, err, http.StatusCreated); err != nil {
		return nil, err
	}
	return c.sandbox(resp.JSON201), nil
}

// Connect returns a running sandbox, resuming it first if it is paused,
// and makes it live at least timeout from now. With 0 a running sandbox
// lives at least 300 s more, and a paused one resumes with the lifetime it
// had left when paused (at least 30 s; 300 s when its timeout paused it).
func (c *Client) Connect(ctx context.Context, id string, timeout time.Duration) (*Sandbox, error) {
	var body rest.ConnectSandboxJSONRequestBody
	body.Timeout = seconds(timeout)
	resp, err := c.api.ConnectSandboxWithResponse(ctx, id, body)
	if err := answer(resp, err, http.StatusOK, http.StatusCreated); err != nil {
		return nil, err
	}
	if resp.JSON201 != nil {
		return c.sandbox(resp.JSON201), nil
	}
	return c.sandbox(resp.JSON200), nil
}

func (c *Client) sandbox(s *rest.Sandbox) *Sandbox {
	domain := deref(s.Domain)
	if domain == "" {
		domain = c.cfg.Domain
	}
	sb := &Sandbox{ID: s.SandboxID, TemplateID: s.TemplateID, EnvdAccessToken: deref(s.EnvdAccessToken),
		TrafficAccessToken: deref(s.TrafficAccessToken), Domain: domain, client: c}
	envd := sb.httpClient(EnvdPort)
	base := sb.baseURL(EnvdPort)
	procs := processconnect.NewProcessClient(envd, base)
	sb.Commands = &Commands{sb: sb, rpc: procs}
	sb.Pty = &Pty{c: sb.Commands}
	sb.Files = &Files{sb: sb, http: envd, base: base, rpc: filesystemconnect.NewFilesystemClient(envd, base)}
	return sb
}

// Info is what the server knows of a sandbox, running or paused.
type Info struct {
	ID, TemplateID, Alias string
	State                 string // "running" or "paused"
	StartedAt, EndAt      time.Time
	CPUCount, MemoryMB    int
	DiskSizeMB            int
	Metadata              map[string]string
	VolumeMounts          []VolumeMount
}

func info(d *rest.SandboxDetail) Info {
	return Info{ID: d.SandboxID, TemplateID: d.TemplateID, Alias: deref(d.Alias), State: string(d.State),
		StartedAt: d.StartedAt, EndAt: d.EndAt, CPUCount: d.CPUCount, MemoryMB: d.MemoryMB,
		DiskSizeMB: d.DiskSizeMB, Metadata: d.Metadata, VolumeMounts: volumeMounts(d.VolumeMounts)}
}

// GetInfo returns a sandbox's details.
func (c *Client) GetInfo(ctx context.Context, id string) (Info, error) {
	resp, err := c.api.GetSandboxWithResponse(ctx, id)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return Info{}, err
	}
	return info(resp.JSON200), nil
}

// ListOptions filter a list; the zero value lists every sandbox.
type ListOptions struct {
	Metadata map[string]string
	// State keeps only "running" or "paused" sandboxes ("": both).
	State string
	// Limit is the page size (0: the server's); NextToken continues a list.
	Limit     int
	NextToken string
}

// List returns one page of sandboxes and the token of the next ("" after
// the last).
func (c *Client) List(ctx context.Context, o ListOptions) ([]Info, string, error) {
	var p rest.ListSandboxesParams
	if len(o.Metadata) > 0 {
		q := url.Values{}
		for k, v := range o.Metadata {
			q.Set(k, v)
		}
		md := q.Encode()
		p.Metadata = &md
	}
	if o.State != "" {
		p.State = &o.State
	}
	if o.Limit > 0 {
		p.Limit = &o.Limit
	}
	if o.NextToken != "" {
		p.NextToken = &o.NextToken
	}
	resp, err := c.api.ListSandboxesWithResponse(ctx, &p)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, "", err
	}
	var out []Info
	for _, d := range *resp.JSON200 {
		out = append(out, info(&d))
	}
	return out, resp.HTTPResponse.Header.Get("X-Next-Token"), nil
}

// Kill ends a sandbox and frees all it holds.
func (c *Client) Kill(ctx context.Context, id string) error {
	resp, err := c.api.KillSandboxWithResponse(ctx, id)
	return answer(resp, err, http.StatusNoContent)
}

// SetTimeout makes the sandbox end timeout from now.
func (c *Client) SetTimeout(ctx context.Context, id string, timeout time.Duration) error {
	resp, err := c.api.SetSandboxTimeoutWithResponse(ctx, id, rest.SetSandboxTimeoutJSONRequestBody{Timeout: int64(timeout / time.Second)})
	return answer(resp, err, http.StatusNoContent)
}

// PauseOptions are a pause's settings; the zero value keeps the memory,
// as E2B's pause does.
type PauseOptions struct {
	// DiskOnly keeps only the sandbox's disk: the resume boots it afresh.
	DiskOnly bool
}

// PauseSandbox freezes a sandbox until a resume or connect.
func (c *Client) PauseSandbox(ctx context.Context, id string, o PauseOptions) error {
	keepMemory := !o.DiskOnly
	resp, err := c.api.PauseSandboxWithResponse(ctx, id, rest.PauseSandboxJSONRequestBody{Memory: &keepMemory})
	return answer(resp, err, http.StatusNoContent)
}

// Pause freezes the sandbox until a resume or connect.
func (s *Sandbox) Pause(ctx context.Context, o PauseOptions) error {
	return s.client.PauseSandbox(ctx, s.ID, o)
}

// Kill ends the sandbox.
func (s *Sandbox) Kill(ctx context.Context) error { return s.client.Kill(ctx, s.ID) }

// SetTimeout makes the sandbox end timeout from now.
func (s *Sandbox) SetTimeout(ctx context.Context, timeout time.Duration) error {
	return s.client.SetTimeout(ctx, s.ID, timeout)
}

// GetInfo returns the sandbox's details.
func (s *Sandbox) GetInfo(ctx context.Context) (Info, error) { return s.client.GetInfo(ctx, s.ID) }

// Host is where the sandbox's port answers: <port>-<id>.<domain>.
func (s *Sandbox) Host(port int) string {
	return fmt.Sprintf("%d-%s.%s", port, s.ID, s.Domain)
}

// trafficTokenParam is the query parameter by which warren's proxy takes a
// private sandbox's traffic token from a browser (internal/proxy).
const trafficTokenParam = "e2b_traffic_token"

// BrowserURL is an https URL of target (a path, with a query or fragment
// if any) on the sandbox's port, for a browser to open. When the sandbox's
// traffic is private it carries the traffic token, which a browser cannot
// send as E2B's header: warren takes it once from the URL and answers with
// a redirect to the same URL without it and a cookie for that port's host
// (a warren extension; E2B's own proxy takes the header only). Browsers
// need Host routing, a domain with wildcard DNS: a sandbox URL
// (E2B_SANDBOX_URL) routes by headers, which a browser does not send.
func (s *Sandbox) BrowserURL(port int, target string) string {
	rest, fragment, hasFragment := strings.Cut(target, "#")
	u := "https://" + s.Host(port) + "/" + strings.TrimPrefix(rest, "/")
	if s.TrafficAccessToken != "" {
		sep := "?"
		if strings.Contains(u, "?") {
			sep = "&"
		}
		u += sep + trafficTokenParam + "=" + url.QueryEscape(s.TrafficAccessToken)
	}
	if hasFragment {
		u += "#" + fragment
	}
	return u
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// seconds is a timeout as the API takes it, whole seconds; nil (the
// server's default) for none.
func seconds(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	s := int64(d / time.Second)
	return &s
}
