#!/usr/bin/env bash
# Reproduces the density table of docs/benchmarks.md: for each runtime,
# starts a warren server on its own bridge, a /22 subnet and data dir,
# without the per-team sandbox cap, runs `warren bench --density N`
# against it (sandboxes created one after another, each answering a
# command; idle CPU and memory per sandbox measured as they add up; then
# all killed and the host checked), and stops the server by its PID.
# Usage: scripts/density.sh [runtime...]   (default: runc runsc)
# DENSITY_N (default 500), DENSITY_FLAGS (more `warren bench` flags, e.g.
# --idle-window=10s) and DENSITY_SERVE_FLAGS (more `warren serve` flags,
# e.g. --oom-guard-poll for the polling OOM guard) tune it; DENSITY_KEEP_LOG=F
# keeps the server log in F.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/serve.sh
[ -x bin/warren ] || make build
runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(runc runsc)
key="e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')"
read -ra flags <<<"${DENSITY_FLAGS:-}"
read -ra serve_flags <<<"${DENSITY_SERVE_FLAGS:-}"
for rt in "${runtimes[@]}"; do
	data=$(mktemp -d /tmp/warren-density-XXXXXX)
	port=$((20000 + RANDOM % 20000))
	WARREN_API_KEY=$key ./bin/warren serve --listen 127.0.0.1:$port --data-dir "$data" \
		--runtime "$rt" --bridge wdense0 --subnet 10.231.244.0/22 --team-max-sandboxes 0 --pool-size=0 "${serve_flags[@]}" >"$data/serve.log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' EXIT
	wait_healthy $port $pid "$data/serve.log"
	echo "## $rt"
	E2B_API_URL=http://127.0.0.1:$port E2B_API_KEY=$key ./bin/warren bench --runtime "$rt" \
		--data-dir "$data" --bridge wdense0 --density "${DENSITY_N:-500}" "${flags[@]}"
	kill -TERM $pid
	wait $pid || true
	trap - EXIT
	[ -n "${DENSITY_KEEP_LOG:-}" ] && cp "$data/serve.log" "$DENSITY_KEEP_LOG"
	rm -rf "$data"
done
