package base

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// Every write into the rootfs goes through an os.Root, so a symlink in the
// tree (say an absolute /etc/resolv.conf -> /run/...) can never make us
// write to the host's files. Files we own are removed and recreated rather
// than opened in place, so an existing symlink is replaced, not followed.

// The sandbox's unprivileged account, as E2B SDKs expect it.
const (
	userName  = "user"
	userUID   = 1000
	userGID   = 1000
	userHome  = "home/user" // relative to the rootfs
	userShell = "/bin/bash"
)

// Placeholder contents. warren provides the real hostname, hosts and
// resolver configuration per sandbox at start; these only keep the host's
// copies (debootstrap copies /etc/resolv.conf and /etc/hostname) out of the
// template and give tools something sane before that.
const (
	hostnameFile = "sandbox\n"
	hostsFile    = `127.0.0.1	localhost
127.0.1.1	sandbox
::1	localhost ip6-localhost ip6-loopback
ff02::1	ip6-allnodes
ff02::2	ip6-allrouters
`
	resolvFile = "# Placeholder: warren writes the sandbox's resolver configuration when it starts.\n"
)

// configFiles are written verbatim, with the mode given.
var configFiles = []struct {
	name string
	mode fs.FileMode
	data string
}{
	// Sandboxes have no init system, and installing a package must never
	// try to start a daemon (debootstrap writes the same file while it
	// runs, then deletes it; we keep it for later apt use, as Docker's
	// Debian images do).
	{"usr/sbin/policy-rc.d", 0o755, "#!/bin/sh\n# warren: sandboxes have no init system; never start services on install.\nexit 101\n"},
	{"etc/sudoers.d/user", 0o440, "# warren: the sandbox user may run anything as root without a password.\nuser ALL=(ALL:ALL) NOPASSWD: ALL\n"},
	{"etc/hostname", 0o644, hostnameFile},
	{"etc/hosts", 0o644, hostsFile},
	{"etc/resolv.conf", 0o644, resolvFile},
	{"etc/default/locale", 0o644, "LANG=C.UTF-8\n"},
	// For login shells; pam_env reads /etc/default/locale for su and sudo.
	{"etc/profile.d/warren-locale.sh", 0o644, ": \"${LANG:=C.UTF-8}\"\nexport LANG\n"},
	// Keep later installs (template builds, users' apt-get) as lean as
	// this one.
	{"etc/apt/apt.conf.d/99warren", 0o644, "APT::Install-Recommends \"false\";\nAPT::Install-Suggests \"false\";\nAcquire::Languages \"none\";\n"},
	{"etc/dpkg/dpkg.cfg.d/99warren-excludes", 0o644, dpkgExcludes},
	// Debian marks its Python "externally managed" (PEP 668), so a plain
	// `pip install x` fails. Agents, and code written for E2B's images, do
	// exactly that; let pip install (to ~/.local as user, since the
	// system site-packages is not writable by user).
	{"etc/pip.conf", 0o644, "[global]\nbreak-system-packages = true\n"},
}

// dpkgExcludes keeps packages installed later from bringing back what trim
// removes. There is no man-db in the image to read man pages anyway.
const dpkgExcludes = `# warren: documentation and translations are not installed in sandboxes.
path-exclude=/usr/share/man/*
path-exclude=/usr/share/info/*
path-exclude=/usr/share/doc/*
path-include=/usr/share/doc/*/copyright
path-exclude=/usr/share/locale/*
path-include=/usr/share/locale/locale.alias
path-exclude=/usr/share/lintian/*
`

// configure turns a fresh debootstrap tree at rootfs into the base template.
func configure(rootfs string) error {
	r, err := os.OpenRoot(rootfs)
	if err != nil {
		return fmt.Errorf("opening rootfs: %w", err)
	}
	defer r.Close()
	for _, f := range configFiles {
		if err := cachedfs.PutFile(r, f.name, []byte(f.data), f.mode); err != nil {
			return err
		}
	}
	if err := writeAccounts(r); err != nil {
		return err
	}
	if err := makeHome(r); err != nil {
		return err
	}
	if err := speedUpProfile(r); err != nil {
		return err
	}
	return makeDirs(r)
}

// speedUpProfile lets /etc/profile take the uid from bash's $EUID instead of
// running id(1). The SDK runs every command as `bash -l -c`, so that one
// fork+exec is paid on every commands.run; under gVisor it is tens of ms.
// Other shells (dash has no EUID) still fall back to id.
func speedUpProfile(r *os.Root) error {
	data, err := r.ReadFile("etc/profile")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading /etc/profile: %w", err)
	}
	fast := strings.ReplaceAll(string(data), `"$(id -u)"`, `"${EUID:-$(id -u)}"`)
	return cachedfs.PutFile(r, "etc/profile", []byte(fast), 0o644)
}

// makeDirs creates or fixes the directories the runtime relies on.
func makeDirs(r *os.Root) error {
	dirs := []struct {
		name string
		mode fs.FileMode
	}{
		{".warren", 0o755}, // warren bind-mounts envd here, read-only
		{"root", 0o700},
		{"tmp", 0o777 | fs.ModeSticky},
		{"var/tmp", 0o777 | fs.ModeSticky},
	}
	for _, d := range dirs {
		if err := r.MkdirAll(d.name, d.mode.Perm()); err != nil {
			return fmt.Errorf("creating /%s: %w", d.name, err)
		}
		if err := r.Chmod(d.name, d.mode); err != nil {
			return fmt.Errorf("setting mode of /%s: %w", d.name, err)
		}
	}
	return nil
}

// makeHome creates the user's home from /etc/skel, owned by the user.
func makeHome(r *os.Root) error {
	if err := r.MkdirAll(userHome, 0o755); err != nil {
		return fmt.Errorf("creating /%s: %w", userHome, err)
	}
	if err := r.Chmod(userHome, 0o755); err != nil {
		return fmt.Errorf("setting mode of /%s: %w", userHome, err)
	}
	err := fs.WalkDir(r.FS(), "etc/skel", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "etc/skel" {
			return err
		}
		return copySkelEntry(r, p, path.Join(userHome, p[len("etc/skel/"):]), d)
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("copying /etc/skel: %w", err)
	}
	return chownTree(r, userHome, userUID, userGID)
}

func copySkelEntry(r *os.Root, src, dst string, d fs.DirEntry) error {
	info, err := d.Info()
	if err != nil {
		return err
	}
	switch {
	case d.IsDir():
		return r.MkdirAll(dst, info.Mode().Perm())
	case d.Type().IsRegular():
		data, err := r.ReadFile(src)
		if err != nil {
			return err
		}
		return cachedfs.PutFile(r, dst, data, info.Mode().Perm())
	case d.Type()&fs.ModeSymlink != 0:
		target, err := r.Readlink(src)
		if err != nil {
			return err
		}
		return r.Symlink(target, dst)
	}
	return nil // skel holds no devices or fifos worth copying
}

// chownTree gives everything under dir (not following symlinks) to uid:gid.
func chownTree(r *os.Root, dir string, uid, gid int) error {
	return fs.WalkDir(r.FS(), dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := r.Lchown(p, uid, gid); err != nil {
			return fmt.Errorf("chown /%s: %w", p, err)
		}
		return nil
	})
}
