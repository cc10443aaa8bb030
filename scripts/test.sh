#!/usr/bin/env bash
# The README's test command: sets up, then runs every test. As root this
# includes the runtime conformance suite on runc and runsc and the
# end-to-end suite driving real `warren serve` processes with the official
# npm SDKs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
./scripts/setup.sh
# The desktop template (about 800 MiB of Debian packages over base) builds
# while vet, fuzz and the unit tests run, so that TestDesktop finds it
# cached; a server that starts before it is done waits for its lock. The
# build is itself a test: it checks what @e2b/desktop runs is in it.
echo
echo "==> building the desktop template in the background (log /tmp/warren-desktop-build.log)"
WARREN_TEST_DESKTOP_BUILD=1 go test -count=1 -run TestEnsureRealBuild -timeout 40m ./internal/template/desktop \
	>/tmp/warren-desktop-build.log 2>&1 &
desktop_build=$!
echo
echo "==> go vet"
go vet ./...
echo
echo "==> fuzz (every target, ${FUZZTIME:-3s} each)"
./scripts/fuzz.sh
echo
echo "==> go test ./... (unit, conformance and end-to-end)"
# One package at a time: the runtime, network and end-to-end tests all
# start sandboxes, and on two cores running them together only adds noise.
go test -p 1 -count=1 -timeout 40m ./... 2>&1 | tee /tmp/warren-test.log
echo
if ! wait "$desktop_build"; then
	echo "==> the desktop template build failed:" >&2
	tail -40 /tmp/warren-desktop-build.log >&2
	exit 1
fi
echo "==> desktop template build: ok"
