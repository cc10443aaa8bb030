package cachedfs

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/template/buildlog"
)

// Tool is a build tool (debootstrap, apt-get) run to completion, its
// output fed line by line to the build log, the progress display and the
// logger at debug level.
type Tool struct {
	Name string // in messages: "debootstrap", "apt-get install"
	Argv []string
	Env  []string
	// Lock is inherited by the tool and everything it starts, so the build
	// lock stays held if warren dies and leaves them running.
	Lock    *os.File
	Log     io.Writer
	Observe func(line string)
}

// Run runs the tool in its own process group, so cancelling ctx kills
// dpkg and maintainer scripts too, not just the tool's shell. A failure
// carries the tool's last lines of output.
func (t Tool) Run(ctx context.Context) error {
	tail := &buildlog.TailLines{Max: 25}
	logger := log.G(ctx)
	out := &buildlog.LineWriter{Fn: func(line string) {
		fmt.Fprintln(t.Log, line)
		tail.Add(line)
		logger.Debug(t.Name, "line", line)
		if t.Observe != nil {
			t.Observe(line)
		}
	}}
	cmd := exec.CommandContext(ctx, t.Argv[0], t.Argv[1:]...)
	cmd.Env = t.Env
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = out, out
	if t.Lock != nil {
		cmd.ExtraFiles = []*os.File{t.Lock}
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 30 * time.Second
	logger.Info("running "+t.Name, "argv", t.Argv)
	err := cmd.Run()
	out.Flush()
	if err != nil {
		if ctxErr := context.Cause(ctx); ctxErr != nil {
			return fmt.Errorf("%s interrupted: %w", t.Name, ctxErr)
		}
		return fmt.Errorf("%s failed (%w); last output:\n%s", t.Name, err, tail.String())
	}
	return nil
}

// ToolEnv is a clean environment for debootstrap, apt and the maintainer
// scripts they run: the host's DEBIAN_* settings must not leak into the
// chroot. Proxy settings pass through, since without them the mirror may
// be unreachable.
func ToolEnv() []string {
	env := []string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"HOME=/root",
		"LC_ALL=C",
		"DEBIAN_FRONTEND=noninteractive",
		"DEBCONF_NONINTERACTIVE_SEEN=true",
	}
	for _, k := range []string{"http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
