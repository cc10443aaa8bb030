package codeinterp

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/buildlog"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// aptScript runs in a new mount and PID namespace (see aptCommand), so the
// mounts it makes vanish when it exits and any process a maintainer script
// leaves behind is killed with it. The rootfs keeps its placeholder
// resolv.conf: the host's is bind-mounted over it only for the downloads.
// apt's .deb cache and lists are bind-mounted from the template cache, so
// a rebuild downloads only what changed and the tree never holds them.
const aptScript = `set -eu
R=$1 DEBS=$2 LISTS=$3 STUB=$4
shift 4
mount -t proc proc "$R/proc"
# A private devpts only so dpkg can keep its terminal log; not required.
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts" 2>/dev/null || true
mount --bind "$DEBS" "$R/var/cache/apt/archives"
mount --bind "$LISTS" "$R/var/lib/apt/lists"
if [ -e /etc/resolv.conf ]; then mount --bind /etc/resolv.conf "$R/etc/resolv.conf"; fi
chroot "$R" apt-get -q update
# The base keeps no man pages, but the JRE's postinst registers java.1.gz
# with update-alternatives, which fails unless the directory exists.
mkdir -p "$R/usr/share/man/man1"
# The stub first, on its own: once installed it satisfies python3-pythran,
# so the resolver never selects the real package (see stub.go).
chroot "$R" apt-get -q -y install "/var/cache/apt/archives/$STUB"
chroot "$R" apt-get -q -y --no-install-recommends -o Dpkg::Options::=--force-confold install "$@"
`

// aptInstall installs packages into rootfs, logging to logw and reporting
// to p. The lock file is inherited by every process of the install so the
// build lock stays held as long as any of them lives.
func aptInstall(ctx context.Context, rootfs string, l layout, packages []string, lock *os.File, logw io.Writer, p *buildlog.Progress) error {
	for _, dir := range []string{l.debs, l.lists} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating apt cache: %w", err)
		}
	}
	if _, err := writeStubDeb(l.debs); err != nil {
		return err
	}
	unshare, err := lookPath("unshare")
	if err != nil {
		return err
	}
	argv := []string{unshare, "--mount", "--propagation", "private", "--pid", "--fork", "--",
		"/bin/sh", "-c", aptScript, "sh", rootfs, l.debs, l.lists, stubDebName}
	argv = append(argv, packages...)
	return cachedfs.Tool{Name: "apt-get install", Argv: argv, Env: cachedfs.ToolEnv(), Lock: lock, Log: logw,
		Observe: func(line string) { observe(p, line) }}.Run(ctx)
}

// pruneDebCache removes the .debs that are not the installed version of
// an installed package, so the cache does not grow with each point
// release. apt names them name_version_arch.deb, with ':' as %3a.
func pruneDebCache(cache string, installed []string) error {
	keep := make(map[string]bool, len(installed))
	for _, nv := range installed {
		name, version, _ := strings.Cut(nv, "=")
		keep[name+"_"+strings.ReplaceAll(version, ":", "%3a")] = true
	}
	entries, err := os.ReadDir(cache)
	if err != nil {
		return fmt.Errorf("listing package cache: %w", err)
	}
	for _, e := range entries {
		n := e.Name()
		if !strings.HasSuffix(n, ".deb") {
			continue
		}
		if i := strings.LastIndexByte(n, '_'); i > 0 && keep[n[:i]] {
			continue
		}
		if err := os.Remove(filepath.Join(cache, n)); err != nil {
			return fmt.Errorf("pruning package cache: %w", err)
		}
	}
	return nil
}

// lookPath finds a tool in PATH or in the sbin directories a non-login
// PATH often lacks.
func lookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/bin", "/bin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found: %w", name, exec.ErrNotFound)
}
