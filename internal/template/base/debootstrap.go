package base

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/template/buildlog"
)

// archiveKeyring verifies the mirror's Release file. We pass it explicitly
// with --force-check-gpg because debootstrap otherwise proceeds unverified,
// with only a warning, when the keyring is missing.
const archiveKeyring = "/usr/share/keyrings/debian-archive-keyring.gpg"

// debootstrapFallback is where Debian installs debootstrap; /usr/sbin is
// often missing from a non-login PATH. A variable so tests can hide it.
var debootstrapFallback = "/usr/sbin/debootstrap"

func debootstrapPath() (string, error) {
	if p, err := exec.LookPath("debootstrap"); err == nil {
		return p, nil
	}
	if _, err := os.Stat(debootstrapFallback); err == nil {
		return debootstrapFallback, nil
	}
	return "", errdefs.New(errdefs.ErrFailedPrecondition,
		"debootstrap not found: the base template is built from Debian packages with it; install it with `apt-get install debootstrap`")
}

// debootstrapArgs is the command line for one build.
func debootstrapArgs(opts Options, r recipe, rootfs, debCache string) []string {
	return []string{
		"--variant=minbase",
		"--include=" + strings.Join(r.Packages, ","),
		"--components=main",
		"--force-check-gpg",
		"--keyring=" + archiveKeyring,
		"--cache-dir=" + debCache,
		r.Suite, rootfs, opts.Mirror,
	}
}

// debootstrapEnv is a clean environment: the host's locale, TMPDIR or
// DEBIAN_* settings must not leak into maintainer scripts in the chroot.
// Proxy settings pass through, since without them the mirror may be
// unreachable.
func debootstrapEnv() []string {
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

// privateMountCommand returns the prefix that runs a command in a new,
// private mount namespace, or nil if unshare does not work here (a
// container without CAP_SYS_ADMIN for it, say). In the namespace the mounts
// debootstrap makes never appear on the host and die with the process.
func privateMountCommand(ctx context.Context) []string {
	p, err := exec.LookPath("unshare")
	if err != nil {
		return nil
	}
	prefix := []string{p, "--mount", "--propagation", "private", "--"}
	probe := exec.CommandContext(ctx, prefix[0], append(prefix[1:], "true")...)
	if err := probe.Run(); err != nil {
		log.G(ctx).Warn("unshare unavailable; debootstrap will mount in the host namespace", "error", err)
		return nil
	}
	return prefix
}

// runDebootstrap runs debootstrap to completion, feeding its output to
// progress, to the logger at debug level and to logw. The lock file is
// inherited by debootstrap and everything it starts, so the build lock stays
// held if warren dies and leaves them running.
func runDebootstrap(ctx context.Context, args []string, lock *os.File, logw io.Writer, p *buildlog.Progress) error {
	bin, err := debootstrapPath()
	if err != nil {
		return err
	}
	argv := append(privateMountCommand(ctx), bin)
	argv = append(argv, args...)
	tail := &buildlog.TailLines{Max: 25}
	logger := log.G(ctx)
	out := &buildlog.LineWriter{Fn: func(line string) {
		fmt.Fprintln(logw, line)
		tail.Add(line)
		logger.Debug("debootstrap", "line", line)
		p.Observe(line)
	}}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = debootstrapEnv()
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = out, out
	cmd.ExtraFiles = []*os.File{lock}
	// Own process group, so cancelling kills dpkg and maintainer scripts
	// too, not just the debootstrap shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 30 * time.Second

	logger.Info("running debootstrap", "argv", argv)
	err = cmd.Run()
	out.Flush()
	if err != nil {
		if ctxErr := context.Cause(ctx); ctxErr != nil {
			return fmt.Errorf("debootstrap interrupted: %w", ctxErr)
		}
		return fmt.Errorf("debootstrap failed (%w); last output:\n%s", err, tail.String())
	}
	return nil
}
