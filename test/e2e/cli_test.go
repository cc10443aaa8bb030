package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
)

// cli runs `warren` client commands against one server, with a login
// config of its own and no E2B_* variables.
type cli struct {
	t   *testing.T
	bin string
	env []string
}

func (c cli) run(stdin string, args ...string) (stdout, stderr string, code int) {
	c.t.Helper()
	cmd := exec.CommandContext(c.t.Context(), c.bin, args...)
	cmd.Env = c.env
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		c.t.Fatalf("warren %v: %v", args, err)
	}
	return out.String(), errOut.String(), code
}

// must runs a command that has to succeed.
func (c cli) must(stdin string, args ...string) string {
	c.t.Helper()
	out, errOut, code := c.run(stdin, args...)
	if code != 0 {
		c.t.Fatalf("warren %v: exit %d: %s", args, code, errOut)
	}
	return out
}

// TestCLI drives `warren login` and `warren sandbox ...` as a user would:
// the config file's mode, create's last line, ls as a table and as JSON,
// exec's streams, stdin and exit status, cp both ways, a terminal over
// the PTY with a resize, pause/resume, kill, and errors that are one
// clear line.
func TestCLI(t *testing.T) {
	cfg := loadConfig(t)
	s := launchServer(t, cfg, serverOpts{index: cliIndex(t, 0), runtime: cfg.runtimes[0]})
	home := t.TempDir()
	c := cli{t: t, bin: cfg.warrenBin, env: append(environWithout("E2B_"), "WARREN_CONFIG="+filepath.Join(home, "cfg", "config.json"))}

	if _, errOut, code := c.run("", "sandbox", "ls"); code != 1 || !strings.Contains(errOut, "warren login") {
		t.Errorf("ls before login: exit %d, %q", code, errOut)
	}
	if _, errOut, code := c.run("e2b_0000000000000000000000000000000000000000\n", "login", "--api-url", s.url); code != 1 || !strings.Contains(errOut, "401") {
		t.Errorf("login with a wrong key: exit %d, %q", code, errOut)
	}
	c.must(s.apiKey+"\n", "login", "--api-url", s.url)
	if st, err := os.Stat(filepath.Join(home, "cfg", "config.json")); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("config file: %v, %v", st, err)
	}

	lines := strings.Split(strings.TrimSpace(c.must("", "sandbox", "create", "--metadata", "who=cli", "--env", "FOO=bar", "--timeout", "2m")), "\n")
	id := lines[len(lines)-1]
	defer c.run("", "sandbox", "kill", id)
	if table := c.must("", "sandbox", "ls"); !strings.Contains(table, id) || !strings.Contains(table, "who=cli") || !strings.HasPrefix(table, "ID") {
		t.Errorf("ls table:\n%s", table)
	}
	var list []struct{ ID, State string }
	if err := json.Unmarshal([]byte(c.must("", "sandbox", "ls", "--json", "-m", "who=cli")), &list); err != nil || len(list) != 1 || list[0].ID != id {
		t.Errorf("ls --json = %+v, %v", list, err)
	}

	if out := c.must("", "__complete", "sandbox", "kill", ""); !strings.HasPrefix(out, id+"\t") {
		t.Errorf("completion of sandbox ids: %q", out)
	}
	for _, sh := range []string{"bash", "zsh"} {
		if out := c.must("", "completion", sh); !strings.Contains(out, "warren") {
			t.Errorf("completion %s: %q", sh, out)
		}
	}

	out, errOut, code := c.run("", "sandbox", "exec", id, "--", "echo $FOO; echo oops >&2; exit 3")
	if out != "bar\n" || errOut != "oops\n" || code != 3 {
		t.Errorf("exec: %q %q exit %d", out, errOut, code)
	}
	if out := c.must("from stdin\n", "sandbox", "exec", "-u", "root", id, "--", "cat; whoami"); out != "from stdin\nroot\n" {
		t.Errorf("exec with stdin: %q", out)
	}
	// Several arguments are an argv: each arrives as typed, as with
	// `e2b sandbox exec`.
	if out := c.must("", "sandbox", "exec", id, "--", "sh", "-c", "echo $((6*7))"); out != "42\n" {
		t.Errorf("exec sh -c: %q", out)
	}
	argv := []string{"a b", "it's", `"q"`, "$HOME", "`id`", "x\\y", ""}
	if out := c.must("", append([]string{"sandbox", "exec", id, "--", "printf", "%s|"}, argv...)...); out != strings.Join(argv, "|")+"|" {
		t.Errorf("exec argv: %q, want %q", out, strings.Join(argv, "|")+"|")
	}

	local := filepath.Join(home, "blob")
	blob := bytes.Repeat([]byte("0123456789abcdef"), 64<<10)
	if err := os.WriteFile(local, blob, 0o644); err != nil {
		t.Fatal(err)
	}
	c.must("", "sandbox", "cp", local, id+":/tmp/")
	c.must("", "sandbox", "cp", id+":/tmp/blob", filepath.Join(home, "back"))
	if back, err := os.ReadFile(filepath.Join(home, "back")); err != nil || !bytes.Equal(back, blob) {
		t.Errorf("cp round trip: %d bytes, %v", len(back), err)
	}
	if out := c.must("", "sandbox", "cp", id+":/tmp/blob", "-"); len(out) != len(blob) {
		t.Errorf("cp to stdout: %d bytes", len(out))
	}

	cliShell(t, c, id)

	c.must("", "sandbox", "pause", id)
	if out := c.must("", "sandbox", "info", id); !strings.Contains(out, "paused") {
		t.Errorf("info after pause:\n%s", out)
	}
	c.must("", "sandbox", "resume", id)
	c.must("", "sandbox", "kill", id)
	_, errOut, code = c.run("", "sandbox", "info", id)
	if code != 1 || strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, "not found") || strings.Contains(errOut, "goroutine") {
		t.Errorf("info of a killed sandbox: exit %d, %q", code, errOut)
	}
}

// cliShell opens `warren sandbox shell` on a real terminal, checks the
// sandbox's terminal has its size and follows a resize, and leaves.
func cliShell(t *testing.T, c cli, id string) {
	cmd := exec.CommandContext(t.Context(), c.bin, "sandbox", "shell", id)
	cmd.Env = c.env
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 91, Rows: 17})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var mu sync.Mutex
	var out bytes.Buffer
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := tty.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				close(done)
				return
			}
		}
	}()
	seen := func(s string) bool {
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			mu.Lock()
			ok := strings.Contains(out.String(), s)
			mu.Unlock()
			if ok {
				return true
			}
		}
		t.Errorf("%q not seen on the terminal", s)
		return false
	}
	if _, err := tty.Write([]byte("stty size\n")); err != nil || !seen("17 91") {
		t.Fatal(err)
	}
	if err := pty.Setsize(tty, &pty.Winsize{Cols: 101, Rows: 27}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // SIGWINCH, then the Update RPC
	if _, err := tty.Write([]byte("stty size; exit\n")); err != nil || !seen("27 101") {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("shell: %v", err)
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}
