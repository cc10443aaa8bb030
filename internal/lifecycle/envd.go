package lifecycle

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/warren-sandbox/warren/internal/envdexec"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

func newEnvdClient() *http.Client {
	return &http.Client{
		Transport: &http.Transport{
			DialContext: (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
			// No idle connections into sandboxes: a connection open when
			// runsc checkpoints is migrated with the sandbox, and one
			// migrated connection leaves the restored network stack deaf
			// after the following checkpoint (seen with this gVisor).
			DisableKeepAlives: true,
		},
	}
}

// initBody is envd's POST /init request.
type initBody struct {
	AccessToken    string            `json:"accessToken,omitempty"`
	EnvVars        map[string]string `json:"envVars,omitempty"`
	DefaultUser    string            `json:"defaultUser"`
	DefaultWorkdir string            `json:"defaultWorkdir"`
	Timestamp      string            `json:"timestamp"`
}

// initEnvd waits for envd to listen and hands it the sandbox's token, env and
// default user. Polling /init directly saves the round trip a separate
// health check would cost on every create.
func (m *Manager) initEnvd(ctx context.Context, ip netip.Addr, sb *store.Sandbox, tpl *store.Template) error {
	user, workdir := defaultUser(tpl)
	body, err := json.Marshal(initBody{
		AccessToken:    sb.EnvdAccessToken,
		EnvVars:        sandboxEnv(sb),
		DefaultUser:    user,
		DefaultWorkdir: workdir,
		Timestamp:      time.Now().UTC().Format(time.RFC3339Nano),
	})
	if err != nil {
		return fmt.Errorf("encoding init: %w", err)
	}
	url := "http://" + netip.AddrPortFrom(ip, m.opts.EnvdPort).String() + "/init"
	ctx, cancel := context.WithTimeout(ctx, m.opts.EnvdReadyTimeout)
	defer cancel()
	err = untilEnvd(ctx, func() error { return postEnvd(ctx, m.client, url, body, sb.EnvdAccessToken) },
		func(error) bool { return true })
	if err != nil {
		return errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("envd did not answer within %s: %v", m.opts.EnvdReadyTimeout, err))
	}
	return nil
}

// untilEnvd calls try until it succeeds, again says its error is final,
// or ctx ends, and returns try's last error. envd comes up within tens of
// milliseconds; a refused connect costs the sandbox little, and a long
// back-off would be paid by every create: it backs off to 4 ms only.
func untilEnvd(ctx context.Context, try func() error, again func(error) bool) error {
	for delay := time.Millisecond; ; delay = min(2*delay, 4*time.Millisecond) {
		err := try()
		if err == nil || !again(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// postEnvd posts body (JSON, or nothing when nil) to one of envd's plain
// HTTP endpoints, with the sandbox's token when it has one.
func postEnvd(ctx context.Context, c *http.Client, url string, body []byte, token string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("X-Access-Token", token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("envd %s answered %s", req.URL.Path, resp.Status)
	}
	return nil
}

// waitPort waits until the sandbox accepts TCP connections on port: the
// template's start command (the code interpreter) is serving.
func (m *Manager) waitPort(ctx context.Context, ip netip.Addr, port int) error {
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartReadyTimeout)
	defer cancel()
	addr := netip.AddrPortFrom(ip, uint16(port)).String()
	delay := 5 * time.Millisecond
	for {
		c, err := (&net.Dialer{Timeout: time.Second}).DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		select {
		case <-ctx.Done():
			return errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("nothing listened on port %d within %s: %v", port, m.opts.StartReadyTimeout, err))
		case <-time.After(delay):
		}
		if delay < 100*time.Millisecond {
			delay *= 2
		}
	}
}

// sandboxEnv is the environment envd gives every process: E2B's variables
// that tell code it runs in a sandbox, and which one, then the request's
// envVars, which win. (E2B also sets E2B_TEAM_ID; warren has no teams yet.)
func sandboxEnv(sb *store.Sandbox) map[string]string {
	env := map[string]string{
		"E2B_SANDBOX":     "true",
		"E2B_SANDBOX_ID":  sb.ID,
		"E2B_TEMPLATE_ID": sb.TemplateID,
		"E2B_TEAM_ID":     store.TeamOf(sb.TeamID),
	}
	maps.Copy(env, sb.EnvVars)
	return env
}

// defaultUser is the user and working directory commands get when they name
// none: the template's (its last USER and WORKDIR), else E2B's `user`.
func defaultUser(tpl *store.Template) (user, workdir string) {
	user, workdir = "user", ""
	if tpl != nil {
		user, workdir = tpl.User, tpl.Workdir
	}
	if user == "" {
		user = "user"
	}
	if workdir == "" {
		switch user {
		case "user":
			workdir = "/home/user"
		case "root":
			workdir = "/root"
		default:
			workdir = "/"
		}
	}
	return user, workdir
}

// waitReady waits for the template's start command to be ready: its port
// to accept connections, or its ready command to succeed.
func (m *Manager) waitReady(ctx context.Context, ip netip.Addr, sb *store.Sandbox, tpl *store.Template) error {
	if tpl == nil {
		return nil
	}
	if tpl.ReadyPort > 0 {
		if err := m.waitPort(ctx, ip, tpl.ReadyPort); err != nil {
			return err
		}
	}
	if tpl.ReadyCmd == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.opts.StartReadyTimeout)
	defer cancel()
	cmd := envdexec.Command{Command: tpl.ReadyCmd, User: "root", Env: tpl.Env, Token: sb.EnvdAccessToken}
	base := "http://" + netip.AddrPortFrom(ip, m.opts.EnvdPort).String()
	for {
		code, err := envdexec.Run(ctx, m.client, base, cmd)
		if err == nil && code == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("the template's ready command %q did not succeed within %s (last: exit %d, %v)", tpl.ReadyCmd, m.opts.StartReadyTimeout, code, err))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
