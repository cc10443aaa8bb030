package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// mcpClientTimeout bounds one run of mcp/client.mjs.
const mcpClientTimeout = 3 * time.Minute

// TestMCP drives `warren mcp` with the official TypeScript MCP SDK
// (mcp/client.mjs) over stdio, where the script spawns it, and over
// streamable HTTP, where the test runs it with --listen and the client
// sends the API key (without it: 401). The script calls
// every tool; once a client has closed (over HTTP: ended its session, or
// left it to time out), the session's sandbox must be gone, and at the
// end no sandbox at all.
func TestMCP(t *testing.T) {
	cfg := loadConfig(t)
	ensureMCPSDK(t, cfg.e2eDir)
	s := launchServer(t, cfg, serverOpts{index: 130, runtime: cfg.runtimes[0]})
	if status, _ := s.call(t, "GET", "/templates/aliases/code-interpreter-v1", ""); status != 200 {
		t.Skip("the server has no code-interpreter-v1 template")
	}
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	env := append(environWithout("E2B_", "MCP_"), "E2B_API_KEY="+s.apiKey, "E2B_API_URL="+s.url,
		"E2B_SANDBOX_URL="+s.url, "E2B_DOMAIN="+cfg.domain)

	t.Run("stdio", func(t *testing.T) {
		id := runMCPClient(t, cfg, append(env, "MCP_TRANSPORT=stdio", "WARREN_BIN="+cfg.warrenBin))
		waitSandboxGone(t, c, id)
	})
	t.Run("http", func(t *testing.T) {
		addr := freeLoopbackAddr(t)
		stop := startMCPHTTP(t, cfg.warrenBin, addr, env, "--session-timeout=3s")
		checkMCPKey(t, "http://"+addr, s.apiKey)
		env := append(env, "MCP_KEY="+s.apiKey)
		id := runMCPClient(t, cfg, append(env, "MCP_TRANSPORT=http", "MCP_URL=http://"+addr))
		waitSandboxGone(t, c, id)
		// A client that leaves without ending its session: the sandbox
		// lives until the session times out.
		id = runMCPClient(t, cfg, append(env, "MCP_TRANSPORT=http", "MCP_URL=http://"+addr, "MCP_KEEP_SESSION=1"))
		if info, err := c.Info(t.Context(), id); err != nil || info.State != "running" {
			t.Errorf("the session's sandbox right after its client left: %+v, %v", info, err)
		}
		waitSandboxGone(t, c, id)
		// SIGTERM with a client connected: the server kills the
		// session's sandbox and exits.
		id = mcpSessionSandbox(t, "http://"+addr, s.apiKey)
		start := time.Now()
		stop()
		t.Logf("warren mcp stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
		waitSandboxGone(t, c, id)
	})
	if list, _, err := c.List(t.Context(), warren.ListOptions{}); err != nil || len(list) != 0 {
		t.Errorf("after the MCP clients: sandboxes %+v, %v", list, err)
	}
}

// ensureMCPSDK installs the npm packages when a node_modules from before
// the MCP SDK was added lacks it.
func ensureMCPSDK(t *testing.T, e2eDir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(e2eDir, "node_modules", "@modelcontextprotocol", "sdk")); err == nil {
		return
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund")
	cmd.Dir = e2eDir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("npm ci in %s: %v\n%s", e2eDir, err, tail(string(out), 40))
	}
}

var sessionSandboxRE = regexp.MustCompile(`(?m)^SESSION_SANDBOX=(\S+)$`)

// runMCPClient runs mcp/client.mjs with env and returns the id of the
// sandbox the server kept for its session.
func runMCPClient(t *testing.T, cfg config, env []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), mcpClientTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", filepath.Join("mcp", "client.mjs"))
	cmd.Dir = cfg.e2eDir
	cmd.Env = env
	cmd.WaitDelay = 10 * time.Second
	out := &lineLog{t: t, live: testing.Verbose()}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	err := cmd.Run()
	out.flush()
	if err != nil {
		if !out.live {
			t.Log(out.String())
		}
		t.Fatalf("node mcp/client.mjs: %v (after %v)", err, time.Since(start).Round(time.Second))
	}
	m := sessionSandboxRE.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("mcp/client.mjs printed no SESSION_SANDBOX line:\n%s", out.String())
	}
	t.Logf("client passed in %v; session sandbox %s", time.Since(start).Round(time.Second), m[1])
	return m[1]
}

// startMCPHTTP runs `warren mcp --listen addr`, waits for it to accept
// connections, and returns a stop that sends it SIGTERM (by PID) and fails
// t unless it exits cleanly.
func startMCPHTTP(t *testing.T, bin, addr string, env []string, args ...string) (stop func()) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"mcp", "--listen", addr}, args...)...)
	cmd.Env = env
	out := &lineLog{t: t, live: testing.Verbose()}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-exited:
			if err != nil {
				t.Errorf("warren mcp after SIGTERM: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("warren mcp (pid %d) still running 30s after SIGTERM; killing it", cmd.Process.Pid)
			_ = cmd.Process.Kill()
			<-exited
		}
		out.flush()
	}
	t.Cleanup(stop)
	err := testutil.Poll(15*time.Second, 100*time.Millisecond, func() error {
		select {
		case err := <-exited:
			stopped = true
			t.Fatalf("warren mcp exited at start: %v\n%s", err, out.String())
		default:
		}
		var d net.Dialer
		conn, err := d.DialContext(t.Context(), "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	})
	if err != nil {
		t.Fatalf("warren mcp --listen %s: %v", addr, err)
	}
	return stop
}

// checkMCPKey: `warren mcp --listen` refuses a request without its key,
// or with another, with 401 and E2B's body.
func checkMCPKey(t *testing.T, url, key string) {
	t.Helper()
	for _, auth := range []string{"", "Bearer " + key + "x"} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body struct{ Code int }
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != 401 || body.Code != 401 {
			t.Errorf("warren mcp with Authorization %q: status %d, body code %d; want 401", auth, resp.StatusCode, body.Code)
		}
	}
}

// mcpSessionSandbox connects to `warren mcp` at url with the Go MCP SDK
// and key, stays connected, and returns the id of the session's sandbox.
func mcpSessionSandbox(t *testing.T, url, key string) string {
	t.Helper()
	hc := &http.Client{Transport: bearerTransport{key}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "warren-e2e", Version: "1"}, nil).
		Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "run_command",
		Arguments: map[string]any{"command": `printf %s "$E2B_SANDBOX_ID"`}})
	if err != nil || res.IsError {
		t.Fatalf("run_command: %v %+v", err, res)
	}
	out, _ := res.StructuredContent.(map[string]any)
	id, _ := out["stdout"].(string)
	if id == "" {
		t.Fatalf("run_command gave no sandbox id: %+v", out)
	}
	return id
}

// bearerTransport sends key with every request.
type bearerTransport struct{ key string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.key)
	return http.DefaultTransport.RoundTrip(r)
}

// waitSandboxGone waits until the server no longer knows sandbox id.
func waitSandboxGone(t *testing.T, c *warren.Client, id string) {
	t.Helper()
	err := testutil.Poll(30*time.Second, 250*time.Millisecond, func() error {
		info, err := c.Info(t.Context(), id)
		if errors.Is(err, warren.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		return errors.New("sandbox " + id + " is still " + info.State)
	})
	if err != nil {
		t.Errorf("the session's sandbox after the client closed: %v", err)
	}
}
