package base

import (
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// ConfigVersion is the revision of what this package does to a rootfs after
// debootstrap (accounts, sudoers, placeholders, trimming). It is part of the
// recipe hash, so bumping it makes every host rebuild instead of reusing a
// rootfs configured by older code. Bump it with any change to configure.go,
// accounts.go or trim.go that changes the resulting tree.
const ConfigVersion = 2

// Packages is what the base template installs on top of debootstrap's
// minbase variant (which already brings bash, coreutils, dpkg, apt and the
// other Essential packages). debootstrap installs Depends and Pre-Depends
// only, never Recommends, which keeps the tree lean.
//
// npm is deliberately absent: Debian's npm depends on about 460 packages
// (node-gyp pulls a compiler toolchain), several times the rest of this
// list. nodejs itself is here; users who need npm can `sudo apt-get install
// npm` or fetch it from the npm registry.
var Packages = []string{
	"bash",
	"ca-certificates",
	"coreutils",
	"curl",
	"file",
	"git",
	"iproute2",
	"jq",
	"less",
	"make",
	"netbase", // /etc/services and /etc/protocols; getaddrinfo and Python's socket need them
	"nodejs",
	"openssh-client",
	"procps",
	"python-is-python3", // agents type `python`; this is a symlink package of a few KB
	"python3",
	"python3-pip",
	"python3-venv",
	"sudo",
	"tzdata",
	"unzip",
	"vim-tiny", // smaller than nano and provides vi, git's fallback editor
	"wget",
	"xz-utils",
}

// recipe is everything that decides the content of a built rootfs. The
// mirror is not part of it: any mirror of the suite serves the same packages.
type recipe struct {
	Suite         string
	Arch          string
	Packages      []string
	ConfigVersion int
}

func newRecipe(suite string, packages []string) recipe {
	pkgs := slices.Clone(packages)
	slices.Sort(pkgs)
	return recipe{
		Suite:         suite,
		Arch:          runtime.GOARCH,
		Packages:      slices.Compact(pkgs),
		ConfigVersion: ConfigVersion,
	}
}

// hash names the recipe in the cache: 16 hex characters of a SHA-256 over a
// canonical text form, so package order and duplicates do not matter.
func (r recipe) hash() string {
	text := fmt.Sprintf("suite=%s\narch=%s\nconfig=%d\npackages=%s\n",
		r.Suite, r.Arch, r.ConfigVersion, strings.Join(r.Packages, ","))
	return cachedfs.Hash(text)
}
