package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Server indexes of the client-side volume tests (bridges we2e236..).
const (
	cliVolumeIndex   = 236
	goSDKVolumeIndex = 237
)

// launchVolumeServer starts a runc server whose volumes are small, and
// deletes what volumes are left before it stops.
func launchVolumeServer(t *testing.T, index int) *server {
	t.Helper()
	cfg := loadConfig(t)
	s := launchServer(t, cfg, serverOpts{index: index, runtime: "runc", args: []string{"--volume-size-mb=16"}})
	t.Cleanup(func() { deleteVolumes(t, s) })
	return s
}

// TestCLIVolumes drives `warren volume` and `warren sandbox create
// --volume` as a user would: create, ls, mkdir, cp both ways (a file, a
// directory, stdin and stdout), cat, token, a sandbox reading and writing
// the volume at its mount, rm of a path, and rm of the volume, refused
// with the server's message while a sandbox mounts it.
func TestCLIVolumes(t *testing.T) {
	cfg := loadConfig(t)
	s := launchVolumeServer(t, cliVolumeIndex)
	home := t.TempDir()
	c := cli{t: t, bin: cfg.warrenBin, env: append(environWithout("E2B_"), "WARREN_CONFIG="+filepath.Join(home, "config.json"))}
	c.must(s.apiKey+"\n", "login", "--api-url", s.url)

	id := strings.TrimSpace(c.must("", "volume", "create", "data"))
	if !strings.HasPrefix(id, "vol") {
		t.Fatalf("volume create printed %q", id)
	}
	if table := c.must("", "volume", "ls"); !strings.HasPrefix(table, "NAME") || !strings.Contains(table, "data") || !strings.Contains(table, id) {
		t.Errorf("volume ls:\n%s", table)
	}
	if tok := strings.TrimSpace(c.must("", "volume", "token", "data")); tok == "" || strings.Contains(tok, "\n") {
		t.Errorf("volume token printed %q", tok)
	}

	local := filepath.Join(home, "blob")
	blob := bytes.Repeat([]byte("0123456789abcdef"), 64<<10)
	if err := os.WriteFile(local, blob, 0o644); err != nil {
		t.Fatal(err)
	}
	c.must("", "volume", "mkdir", "-p", "data:/in/a/b")
	c.must("", "volume", "cp", local, "data:/in/")
	c.must("from stdin\n", "volume", "cp", "-", id+":/in/note.txt")
	if out := c.must("", "volume", "cat", "data:/in/note.txt"); out != "from stdin\n" {
		t.Errorf("volume cat: %q", out)
	}
	if err := os.Mkdir(filepath.Join(home, "out"), 0o755); err != nil {
		t.Fatal(err)
	}
	c.must("", "volume", "cp", "data:/in/blob", filepath.Join(home, "out")) // into a directory: out/blob
	c.must("", "volume", "cp", "data:/in/blob", filepath.Join(home, "back"))
	for _, f := range []string{"out/blob", "back"} {
		if got, err := os.ReadFile(filepath.Join(home, f)); err != nil || !bytes.Equal(got, blob) {
			t.Errorf("cp out of the volume into %s: %d bytes, %v", f, len(got), err)
		}
	}
	if out := c.must("", "volume", "cp", "data:/in/blob", "-"); out != string(blob) {
		t.Errorf("cp to stdout: %d bytes", len(out))
	}
	if out := c.must("", "volume", "ls", "data:/in"); !strings.Contains(out, "a/") || !strings.Contains(out, "blob") || !strings.Contains(out, "note.txt") {
		t.Errorf("volume ls data:/in:\n%s", out)
	}
	if _, errOut, code := c.run("again\n", "volume", "cp", "-n", "-", "data:/in/note.txt"); code != 1 || !strings.Contains(errOut, "409") {
		t.Errorf("cp --no-clobber over a file: exit %d, %q", code, errOut)
	}

	cliVolumeMount(t, c, id)

	c.must("", "volume", "rm", "data:/in/a")
	if out := c.must("", "volume", "ls", "data:/in"); strings.Contains(out, "a/") {
		t.Errorf("ls after rm data:/in/a:\n%s", out)
	}
	c.must("", "volume", "rm", "data")
	if out := c.must("", "volume", "ls", "-q"); out != "" {
		t.Errorf("volume ls -q after rm: %q", out)
	}
}

// cliVolumeMount creates a sandbox mounting volume id at /mnt/v: it reads
// a file cp'd in and writes one cp'd out; the volume cannot be removed
// until the sandbox is killed.
func cliVolumeMount(t *testing.T, c cli, id string) {
	lines := strings.Split(strings.TrimSpace(c.must("", "sandbox", "create", "--volume", "data:/mnt/v", "--timeout", "2m")), "\n")
	sb := lines[len(lines)-1]
	defer c.run("", "sandbox", "kill", sb)
	if out := c.must("", "sandbox", "info", sb); !strings.Contains(out, "data:/mnt/v") {
		t.Errorf("sandbox info lacks the mount:\n%s", out)
	}
	if out := c.must("", "sandbox", "ls"); !strings.Contains(out, "VOLUMES") || !strings.Contains(out, "data:/mnt/v") {
		t.Errorf("sandbox ls lacks the mount:\n%s", out)
	}
	if out := c.must("", "sandbox", "exec", sb, "--", "cat /mnt/v/in/note.txt"); out != "from stdin\n" {
		t.Errorf("the sandbox read %q from the volume", out)
	}
	c.must("", "sandbox", "exec", "-u", "root", sb, "--", "echo from the sandbox > /mnt/v/out.txt")
	if out := c.must("", "volume", "cat", id+":/out.txt"); out != "from the sandbox\n" {
		t.Errorf("volume cat of the sandbox's file: %q", out)
	}
	_, errOut, code := c.run("", "volume", "rm", "data")
	if code != 1 || !strings.Contains(errOut, "is mounted by sandbox") || !strings.Contains(errOut, sb) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("rm of a mounted volume: exit %d, %q", code, errOut)
	}
	c.must("", "sandbox", "kill", sb)
}
