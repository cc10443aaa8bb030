package aptlayer

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// aptScript runs in a new mount and PID namespace (see apt), so the mounts
// it makes vanish when it exits and any process a maintainer script leaves
// behind is killed with it. The rootfs keeps its placeholder resolv.conf:
// the host's is bind-mounted over it only for the downloads.
const aptScript = `set -eu
R=$1 DEBS=$2 LISTS=$3 LOCAL=$4
shift 4
mount -t proc proc "$R/proc"
# A private devpts only so dpkg can keep its terminal log; not required.
mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts" 2>/dev/null || true
mount --bind "$DEBS" "$R/var/cache/apt/archives"
mount --bind "$LISTS" "$R/var/lib/apt/lists"
if [ -e /etc/resolv.conf ]; then mount --bind /etc/resolv.conf "$R/etc/resolv.conf"; fi
chroot "$R" apt-get -q update
# The base keeps no man pages, but some postinsts (the JRE's) register man
# pages with update-alternatives, which fails unless the directory exists.
mkdir -p "$R/usr/share/man/man1"
# Local packages first, each on its own: once installed they satisfy what
# they provide, so the resolver never selects the real package.
for deb in $LOCAL; do
	chroot "$R" apt-get -q -y install "/var/cache/apt/archives/$deb"
done
chroot "$R" apt-get -q -y --no-install-recommends -o Dpkg::Options::=--force-confold install "$@"
`

// apt installs l.Packages into l.Rootfs. The lock file is inherited by
// every process of the install so the build lock stays held as long as any
// of them lives.
func (l Layer) apt(ctx context.Context) error {
	for _, dir := range []string{l.Debs, l.Lists} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("creating apt cache: %w", err)
		}
	}
	for _, deb := range l.LocalDebs {
		if deb == "" || strings.ContainsAny(deb, " \t\n/") {
			return fmt.Errorf("local package %q: want a plain file name in the .deb cache", deb)
		}
	}
	unshare, err := LookPath("unshare")
	if err != nil {
		return err
	}
	argv := []string{unshare, "--mount", "--propagation", "private", "--pid", "--fork", "--",
		"/bin/sh", "-c", aptScript, "sh", l.Rootfs, l.Debs, l.Lists, strings.Join(l.LocalDebs, " ")}
	argv = append(argv, l.Packages...)
	observe := l.Observe
	if observe == nil {
		observe = l.Progress.Observe
	}
	return cachedfs.Tool{Name: "apt-get install", Argv: argv, Env: cachedfs.ToolEnv(), Lock: l.Lock, Log: l.Log,
		Observe: observe}.Run(ctx)
}
