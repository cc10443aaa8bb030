package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// cliIndex is the server index of a CLI test: WARREN_E2E_CLI_INDEX (plus
// offset) when set, so the CLI tests can run beside others, else 131 plus
// offset.
func cliIndex(t *testing.T, offset int) int {
	t.Helper()
	base := 131
	if v := os.Getenv("WARREN_E2E_CLI_INDEX"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n+offset > 250 {
			t.Fatalf("WARREN_E2E_CLI_INDEX=%q: want 0 to %d", v, 250-offset)
		}
		base = n
	}
	return base + offset
}

// TestCLIAdmin drives the administration commands, each one a cobra
// command, against a server the new binary started with serve's flags:
// a key made with `keys create` (in Go's one-dash spelling, as old scripts
// wrote it) works until `keys revoke`; `teams set` limits what the server
// lets the team run; template and image take --url and --api-url; every
// command has --help, completion and exit status 1 for wrong use.
func TestCLIAdmin(t *testing.T) {
	cfg := loadConfig(t)
	s := launchServer(t, cfg, serverOpts{index: cliIndex(t, 1), runtime: cfg.runtimes[0], args: []string{"--code-interpreter=false"}})
	home := t.TempDir()
	c := cli{t: t, bin: cfg.warrenBin, env: append(environWithout("E2B_"), "WARREN_CONFIG="+filepath.Join(home, "none.json"))}

	lines := strings.Split(strings.TrimSpace(c.must("", "keys", "create", "-data-dir", s.dataDir, "-name", "cli-e2e", "--team=acme")), "\n")
	key := lines[len(lines)-1]
	if code := apiStatus(t, s.url, key); code != http.StatusOK {
		t.Fatalf("GET /v2/sandboxes with the created key: %d", code)
	}
	if list := c.must("", "keys", "list", "--data-dir", s.dataDir); !strings.Contains(list, "cli-e2e") || !strings.Contains(list, "acme") || strings.Contains(list, key) {
		t.Errorf("keys list:\n%s", list)
	}

	c.must("", "teams", "set", "acme", "--data-dir", s.dataDir, "--max-sandboxes", "1")
	if list := c.must("", "teams", "list", "--data-dir", s.dataDir); !strings.Contains(list, "acme") {
		t.Errorf("teams list:\n%s", list)
	}
	conn := []string{"--api-url", s.url, "--api-key", key}
	out := c.must("", append([]string{"sandbox", "create", "--timeout", "1m"}, conn...)...)
	id := strings.TrimSpace(out)
	defer c.run("", append([]string{"sandbox", "kill", id}, conn...)...)
	if _, errOut, code := c.run("", append([]string{"sandbox", "create"}, conn...)...); code != 1 || !strings.Contains(errOut, "team acme may run 1") {
		t.Errorf("a second sandbox over the team's quota: exit %d, %q", code, errOut)
	}
	c.must("", append([]string{"sandbox", "kill", id}, conn...)...)

	if out := c.must("", "template", "list", "--url", s.url, "--api-key", key); !strings.Contains(out, "base") {
		t.Errorf("template list --url:\n%s", out)
	}
	if out := c.must("", "template", "get", "base", "-url", s.url, "-api-key", key); !strings.Contains(out, "builds:") {
		t.Errorf("template get -url:\n%s", out)
	}
	if out := c.must("", "image", "list", "--api-url", s.url, "--api-key", key); !strings.HasPrefix(out, "REF") {
		t.Errorf("image list:\n%s", out)
	}

	c.must("", "keys", "revoke", "--data-dir", s.dataDir, "cli-e2e")
	if code := apiStatus(t, s.url, key); code != http.StatusUnauthorized {
		t.Errorf("GET /v2/sandboxes with the revoked key: %d, want 401", code)
	}
	cliConventions(t, c)
}

// cliConventions: --help answers with status 0 everywhere, completion
// knows the server commands' flags, wrong use is status 1 with one clear
// message and no usage dump.
func cliConventions(t *testing.T, c cli) {
	for _, args := range [][]string{{"serve", "--help"}, {"keys", "create", "--help"}, {"teams", "set", "-h"},
		{"bench", "--help"}, {"selftest", "isolation", "--help"}, {"template", "build", "--help"}, {"image", "import", "--help"}} {
		if out := c.must("", args...); !strings.Contains(out, "Usage:") || !strings.Contains(out, "--help") {
			t.Errorf("%v:\n%s", args, out)
		}
	}
	if out := c.must("", "completion", "fish"); !strings.Contains(out, "complete -c warren") {
		t.Errorf("completion fish: %q", out)
	}
	if out := c.must("", "__complete", "serve", "--runtime", ""); !strings.Contains(out, "runsc\nrunc\n") {
		t.Errorf("completion of --runtime: %q", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keys"}, "keys needs a command"},
		{[]string{"selftest", "probe"}, `unknown selftest command "probe"`},
		{[]string{"serve", "--listen"}, "flag needs an argument: --listen"},
		{[]string{"template", "get", "--api-url", "http://127.0.0.1:1", "--api-key", "k"}, "usage: warren template get"},
		{[]string{"teams", "set", "acme", "--data-dir", t.TempDir(), "--max-sandboxes", "x"}, `invalid argument "x"`},
	} {
		_, errOut, code := c.run("", tc.args...)
		if code != 1 || !strings.HasPrefix(errOut, "warren: ") || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "Flags:") {
			t.Errorf("%v: exit %d, %q, want status 1 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

// apiStatus is the status of GET /v2/sandboxes with key.
func apiStatus(t *testing.T, url, key string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+"/v2/sandboxes", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", key)
	res, err := harnessClient.Do(req)
	if err != nil {
		t.Fatal(fmt.Errorf("GET /v2/sandboxes: %w", err))
	}
	res.Body.Close()
	return res.StatusCode
}
