package runtimetest

import (
	"crypto/rand"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"testing"

	"github.com/warren-sandbox/warren/api/wire"
)

// Fixture is what the suite's real sandboxes are made from: a tiny template
// rootfs and the testinit binary, bound read-only at InitPath.
type Fixture struct {
	Rootfs   string // template: a few empty dirs and a sentinel file
	Testinit string // host path of the static testinit binary
}

// InitPath is where testinit is bind-mounted inside the sandbox.
const InitPath = "/warren/testinit"

// InitPort is the port testinit listens on (envd's).
const InitPort = wire.EnvdPort

// Sentinel is a file in the template rootfs with SentinelContent; tests
// overwrite it inside sandboxes and check the template kept its content.
const (
	Sentinel        = "/etc/sentinel"
	SentinelContent = "template"
)

// NewFixture builds testinit and a fresh template rootfs in a temporary
// directory removed when t ends (the go build cache makes rebuilding cheap).
func NewFixture(t testing.TB) *Fixture {
	t.Helper()
	tmp := t.TempDir()
	if err := buildTestinit(filepath.Join(tmp, "testinit")); err != nil {
		t.Fatalf("building testinit: %v", err)
	}
	return &Fixture{Rootfs: NewRootfs(t, filepath.Join(tmp, "rootfs")), Testinit: filepath.Join(tmp, "testinit")}
}

// NewRootfs makes a template rootfs at dir: the few directories a runtime
// mounts over and the sentinel file.
func NewRootfs(t testing.TB, dir string) string {
	t.Helper()
	for _, d := range []string{"etc", "tmp", "proc", "dev", "sys", "root"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "tmp"), 0o1777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Sentinel), []byte(SentinelContent), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildTestinit compiles ./testinit statically to out.
func buildTestinit(out string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(goruntime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "build", "-o", out,
		"github.com/warren-sandbox/warren/internal/runtime/runtimetest/testinit")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if output, err := cmd.CombinedOutput(); err != nil {
		return &buildError{err: err, out: string(output)}
	}
	return nil
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// NewID returns a fresh sandbox id of the contract's alphabet.
func NewID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return "t" + string(b)
}
