#!/usr/bin/env bash
# install-runsc.sh: build gVisor's runsc at the version warren pins, from the
# Go module proxy, and install it as /usr/local/sbin/runsc.
#
# Idempotent. The build (2-3 minutes on 2 cores) happens only when
# $GOBIN_DIR/runsc is missing or was not built from the pinned version; the
# copy to $DEST happens only when it differs. A version stamp next to the
# built binary records what it was built from, and is only trusted when
# `go version -m` (the module version the Go toolchain embedded in the
# binary) agrees, so a binary from some other build is never installed by
# mistake. Debian's own runsc package is from 2022 and its sandbox network is
# broken on current kernels, hence this.
#
# Usage: sudo scripts/install-runsc.sh            (FORCE=1 to rebuild anyway)
# Environment: WARREN_GOBIN (default /var/cache/warren/gobin),
#              RUNSC_DEST (default /usr/local/sbin/runsc).
set -euo pipefail

readonly MODULE=gvisor.dev/gvisor
readonly PKG=gvisor.dev/gvisor/runsc
readonly VERSION=v0.0.0-20260701204157-69c2d17aea96
readonly GOBIN_DIR="${WARREN_GOBIN:-/var/cache/warren/gobin}"
readonly BUILT="$GOBIN_DIR/runsc"
readonly STAMP="$GOBIN_DIR/runsc.version"
readonly LOG="$GOBIN_DIR/runsc-build.log"
readonly DEST="${RUNSC_DEST:-/usr/local/sbin/runsc}"
readonly WANT_STAMP="$PKG@$VERSION"

say() { printf 'install-runsc: %s\n' "$*"; }
die() {
	printf 'install-runsc: error: %s\n' "$*" >&2
	exit 1
}

find_go() {
	if command -v go >/dev/null 2>&1; then
		command -v go
	elif [[ -x /usr/local/go/bin/go ]]; then
		echo /usr/local/go/bin/go
	else
		die "no Go toolchain found (looked in PATH and /usr/local/go/bin); install Go first"
	fi
}

# embedded_version prints the gvisor module version recorded in a binary
# ($1, default $BUILT), or nothing if it is missing, not a Go binary, or not
# runsc.
embedded_version() {
	local bin="${1:-$BUILT}"
	[[ -f $bin ]] || return 0
	"$GO" version -m "$bin" 2>/dev/null | awk -v pkg="$PKG" -v mod="$MODULE" '
		$1 == "path" { path = $2 }
		$1 == "mod" && $2 == mod { ver = $3 }
		END { if (path == pkg) print ver }'
}

# build_is_current says whether $BUILT was built from the pinned version,
# writing the stamp when the binary proves it but the stamp is missing (a
# build made by hand, or one interrupted between install and stamping).
build_is_current() {
	local embedded
	embedded="$(embedded_version)"
	if [[ $embedded != "$VERSION" ]]; then
		[[ -f $BUILT ]] && say "existing $BUILT is from '${embedded:-unknown}', not $VERSION"
		return 1
	fi
	if [[ ! -f $STAMP || "$(cat "$STAMP")" != "$WANT_STAMP" ]]; then
		say "existing $BUILT was built from $VERSION; stamping it"
		printf '%s\n' "$WANT_STAMP" >"$STAMP"
	fi
	return 0
}

# goproxy keeps module downloads on the proxy: the default list ends in
# ",direct", which would fall back to fetching from VCS hosts.
goproxy() {
	local proxy
	proxy="$("$GO" env GOPROXY)"
	if [[ $proxy == "https://proxy.golang.org,direct" ]]; then
		proxy=https://proxy.golang.org
	fi
	printf '%s' "$proxy"
}

build() {
	mkdir -p "$GOBIN_DIR"
	# Until the new build is complete, nothing may claim a version.
	rm -f "$STAMP"
	say "building $WANT_STAMP with $("$GO" version | cut -d' ' -f3) (2-3 minutes on 2 cores; log $LOG)"
	# CGO_ENABLED=0 gives the static binary gVisor's own instructions build.
	GOBIN="$GOBIN_DIR" CGO_ENABLED=0 GOPROXY="$(goproxy)" \
		"$GO" install "$WANT_STAMP" >"$LOG" 2>&1 &
	BUILD_PID=$!
	trap 'kill "$BUILD_PID" 2>/dev/null || true' EXIT
	local start=$SECONDS next=15
	while kill -0 "$BUILD_PID" 2>/dev/null; do
		sleep 1
		if ((SECONDS - start >= next)); then
			say "still building ($((SECONDS - start))s; $(grep -c '^go: downloading' "$LOG" || true) modules downloaded)"
			next=$((next + 15))
		fi
	done
	if ! wait "$BUILD_PID"; then
		trap - EXIT
		tail -n 30 "$LOG" >&2
		die "go install failed after $((SECONDS - start))s (full log: $LOG)"
	fi
	trap - EXIT
	[[ "$(embedded_version)" == "$VERSION" ]] || die "built $BUILT does not report $VERSION"
	printf '%s\n' "$WANT_STAMP" >"$STAMP"
	say "built $BUILT in $((SECONDS - start))s"
}

# install_binary copies $BUILT to $DEST through a temporary file and a
# rename, so a runsc that is running keeps its old inode instead of failing
# with "text file busy", and nothing ever sees a half-written binary.
install_binary() {
	if cmp -s "$BUILT" "$DEST" && [[ "$(stat -c %a "$DEST")" == 755 ]]; then
		say "$DEST is already up to date"
		return
	fi
	local tmp
	tmp="$(mktemp "$DEST.new.XXXXXX")"
	if ! { cp "$BUILT" "$tmp" && chmod 0755 "$tmp" && mv -f "$tmp" "$DEST"; }; then
		rm -f "$tmp"
		die "could not install $DEST"
	fi
	say "installed $DEST"
}

main() {
	GO="$(find_go)"
	mkdir -p "$GOBIN_DIR" 2>/dev/null || true
	[[ -w $GOBIN_DIR && -w "$(dirname "$DEST")" ]] ||
		die "cannot write $GOBIN_DIR or $(dirname "$DEST"); run as root"
	if [[ ${FORCE:-0} == 1 ]] || ! build_is_current; then
		build
	else
		say "$BUILT is $VERSION already; not rebuilding"
	fi
	install_binary
	# Builds from the module proxy are not stamped the way gVisor's release
	# builds are, so `runsc --version` says VERSION_MISSING; show the module
	# version the binary carries instead, after checking that it runs.
	"$DEST" --version >/dev/null || die "$DEST does not run"
	say "$DEST is runsc from $PKG@$(embedded_version "$DEST")"
}

main "$@"
