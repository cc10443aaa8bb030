#!/usr/bin/env bash
# Installs what warren needs on Debian 12 and builds it. Idempotent: a rerun
# only checks. Slow results (runsc, templates) are cached in /var/cache/warren,
# outside the clone, so a fresh clone on the same machine is fast.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

if [ "$(id -u)" -ne 0 ]; then
	echo "setup: run as root (warren creates namespaces, mounts and cgroups)" >&2
	exit 1
fi

need_pkgs=()
# python3-ipykernel: the Jupyter client and interpreter tests drive a real
# kernel on the host. busybox-static: the image tests build a tiny OCI image
# from it and pull it from a registry the test runs on loopback. chromium:
# TestDashboard drives the web dashboard in it, headless. postgresql: the
# Postgres store's tests start a throwaway server from its binaries (the
# packaged cluster it also creates is not needed: stop it if unwanted).
for p in runc debootstrap nftables iproute2 ca-certificates make git curl python3-ipykernel busybox-static chromium postgresql; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need_pkgs+=("$p")
done
# Node.js and npm run the end-to-end tests with the official SDK. A machine
# may have them from elsewhere than Debian (then Debian's npm would conflict):
# install Debian's only when the commands are missing.
command -v node >/dev/null || need_pkgs+=(nodejs)
command -v npm >/dev/null || need_pkgs+=(npm)
if [ ${#need_pkgs[@]} -gt 0 ]; then
	step "installing Debian packages: ${need_pkgs[*]}"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}"
else
	step "Debian packages present"
fi

if ! command -v go >/dev/null; then
	if [ -x /usr/local/go/bin/go ]; then export PATH=$PATH:/usr/local/go/bin; else
		echo "setup: Go is required (https://go.dev/dl or Debian's golang)" >&2; exit 1; fi
fi

step "gVisor runsc (built from the Go module proxy at a pinned version, cached)"
./scripts/install-runsc.sh

step "building bin/warren and bin/envd"
make build
echo "setup: done"
