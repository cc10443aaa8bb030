package base

import (
	"context"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/template/buildlog"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
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

// runDebootstrap runs debootstrap to completion (see cachedfs.Tool).
func runDebootstrap(ctx context.Context, args []string, lock *os.File, logw io.Writer, p *buildlog.Progress) error {
	bin, err := debootstrapPath()
	if err != nil {
		return err
	}
	argv := append(privateMountCommand(ctx), bin)
	argv = append(argv, args...)
	return cachedfs.Tool{Name: "debootstrap", Argv: argv, Env: cachedfs.ToolEnv(), Lock: lock, Log: logw, Observe: p.Observe}.Run(ctx)
}
