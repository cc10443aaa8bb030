#!/usr/bin/env bash
# Runs E2B's own code-interpreter test suites, unchanged, against a warren
# server this script starts: the JS one (vitest, @e2b/code-interpreter with
# the npm `e2b` its package.json asks for) and the Python one (pytest,
# e2b-code-interpreter). As against E2B, only E2B_API_KEY and E2B_DOMAIN are
# set: warren serves TLS with Host routing for the domain suite.test, whose
# names resolve to the server's address through a preload (node --import
# test/e2e/tls/resolve.mjs; Python's sitecustomize in scripts/lib/pyresolve),
# so the host's resolver and /etc/hosts are never touched.
#
# Usage: scripts/official-suites.sh [runtime...]   (default: runsc)
# It is a developer/ops tool (docs/operations.md "E2B's official suites"),
# not part of scripts/test.sh. Needs root, `make build`'s binaries (built if
# missing), the cached templates in /var/cache/warren, node and npm with the
# npm registry, Debian's apt, and git snapshots of e2b-dev/code-interpreter,
# e2b-dev/E2B, encode/httpx, encode/httpcore and dockerfile-parse (paths
# below, overridable). Everything it sets up is kept in SUITES_DIR and
# reused: a second run only runs the suites.
#
# Why not the newest Python `e2b`: from 2.35 on it speaks to envd through
# connectrpc and pyqwest (a Rust extension), which Debian does not package
# and PyPI is not reachable here. So the Python suite runs on e2b 2.34.0,
# the last release on httpx/httpcore, with httpx 0.28.1, httpcore 1.0.7
# and dockerfile-parse from source (Debian bookworm has httpx 0.23, too old
# for it), the rest from Debian's python3-* packages.
#
# Environment: SUITES (default "js py"), SUITES_DIR (/work/ci-suite),
# SUITES_ADDR (127.0.0.31), SUITES_BRIDGE (wsuite1), SUITES_SUBNET
# (10.231.251.0/24), SUITES_TIMEOUT (seconds per suite, 2400),
# SUITES_SERVE_FLAGS (more `warren serve` flags). Arguments after `--` go
# to both runners (e.g. -- tests/basic.test.ts would only suit vitest: use
# SUITES=js for that).
# Exit status: 0 when every suite run passed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. scripts/lib/suites.sh

runtimes=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do runtimes+=("$1"); shift; done
[ "${1:-}" = "--" ] && shift
runner_args=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(runsc)

[ "$(id -u)" = 0 ] || { echo "official-suites: needs root (warren serve)" >&2; exit 2; }
[ -x bin/warren ] && [ -x bin/envd ] || make build
suites_setup

summary=()
status=0
for rt in "${runtimes[@]}"; do
	serve_start "$rt"
	for s in $SUITES; do
		log="$SUITES_DIR/logs/$s-$rt.log"
		if run_suite "$s" "$log"; then r=0; else r=$?; fi
		[ "$r" = 0 ] || status=1
		summary+=("$(summarize "$s" "$rt" "$log" "$r")")
	done
	serve_stop
done

echo
echo "== official suites against warren"
for line in "${summary[@]}"; do echo "$line"; done
exit $status
