// Package aptlayer holds what the templates built as "the base rootfs plus
// some Debian packages" share (code-interpreter-v1, desktop): copying the
// base rootfs, running apt-get in a chroot inside a private mount and PID
// namespace with the template's kept .deb and list caches, pruning the .deb
// cache to what is installed, and the progress steps those phases show.
//
// Starting from a copy of the complete base rootfs and installing with apt,
// rather than running debootstrap again with a longer list, lets apt
// resolve virtual packages and alternatives that debootstrap's resolver
// does not, keeps base's user, sudo, profile and trimming set-up untouched,
// and downloads only the extra packages.
package aptlayer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/template/buildlog"
	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// Layer is one template's package install on a copy of the base rootfs.
type Layer struct {
	BaseRootfs string // the complete base rootfs, copied, never modified
	Rootfs     string // where the copy goes; must not exist yet
	// Debs and Lists are the template's apt caches, created if missing and
	// bind-mounted over the rootfs's, so a rebuild downloads only what
	// changed and the tree never holds them.
	Debs, Lists string
	// LocalDebs are file names in Debs installed first, each on its own,
	// before Packages (codeinterp's pythran stub).
	LocalDebs []string
	// Packages are installed with --no-install-recommends.
	Packages []string
	// Lock is the build lock, inherited by apt and everything it starts.
	Lock *os.File
	// Log receives apt's whole output; LogPath names it in errors.
	Log     io.Writer
	LogPath string
	// Progress shows the steps; Observe, when set, sees each line of apt's
	// output instead of Progress.Observe (to hide some of them).
	Progress *buildlog.Progress
	Observe  func(line string)
}

// Install copies the base rootfs, installs the packages and returns the
// installed package list (name=version). It proves nothing apt mounted is
// left mounted and prunes Debs to the installed versions.
func (l Layer) Install(ctx context.Context) ([]string, error) {
	l.Progress.Enter(StepCopy)
	// cp -a keeps owners, modes, device nodes, hard links and xattrs;
	// reflinks make it nearly free on filesystems that have them.
	cp := exec.CommandContext(ctx, "cp", "-a", "--reflink=auto", l.BaseRootfs, l.Rootfs)
	if out, err := cp.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("copying base rootfs: %w\n%s", err, Tail(out, 2000))
	}
	l.Progress.Enter(StepLists)
	runErr := l.apt(ctx)
	// The namespace is gone with apt; this only proves it.
	if err := cachedfs.UnmountUnder(l.Rootfs); err != nil {
		return nil, errors.Join(runErr, fmt.Errorf("cleaning up apt mounts: %w", err))
	}
	if runErr != nil {
		return nil, fmt.Errorf("%w\n(full log: %s)", runErr, l.LogPath)
	}
	installed, err := cachedfs.InstalledPackages(l.Rootfs)
	if err != nil {
		return nil, err
	}
	if err := PruneDebCache(l.Debs, installed); err != nil {
		return nil, err
	}
	return installed, nil
}

// PruneDebCache removes the .debs that are not the installed version of
// an installed package, so the cache does not grow with each point
// release. apt names them name_version_arch.deb, with ':' as %3a.
func PruneDebCache(cache string, installed []string) error {
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

// CheckHost fails early, with the fix in the message, when this host
// cannot build template id. base.Ensure has already checked for root and
// debootstrap.
func CheckHost(id string) error {
	for _, tool := range []string{"unshare", "chroot", "cp"} {
		if _, err := LookPath(tool); err != nil {
			return errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf(
				"%s not found; building the %s template needs it (util-linux / coreutils)", tool, id))
		}
	}
	return nil
}

// LookPath finds a tool in PATH or in the sbin directories a non-login
// PATH often lacks.
func LookPath(name string) (string, error) {
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

// Tail is the last n bytes of out, trimmed, for error messages.
func Tail(out []byte, n int) string {
	out = bytes.TrimSpace(out)
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return string(out)
}
