#!/usr/bin/env bash
# Reproduces docs/benchmarks.md: for each runtime, starts a warren server on
# its own bridge and data dir, runs `warren bench` against it (which measures
# the runc baseline in the same run), and stops the server by its PID.
# runsc runs twice: with --checkpoint-after=0 (a pause goes to disk at once,
# so resume is a restore) and with the default (resume thaws a frozen
# sandbox; only the pause figures are taken).
# Warm pools are sized for the method's bursts of 100 (--pool-size=100,
# --pool-memory-mb=4096); runsc-nopool measures time to interactive and
# the code interpreter with no pool, cold.
# The pictures go to docs/img (BENCH_PLOT_DIR).
# Usage: scripts/bench.sh [runtime...]   (default: runc runsc runsc-nopool runsc-frozen)
# BENCH_PAUSE_MB (default 100,400) sets the memory held in the pause runs;
# BENCH_SERVE_FLAGS and BENCH_FLAGS add flags to `warren serve` and
# `warren bench` (the 1 GiB row of docs/benchmarks.md:
# BENCH_PAUSE_MB=1024 BENCH_SERVE_FLAGS=--default-memory=2048
# BENCH_FLAGS=--only-pause scripts/bench.sh runc runsc).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/serve.sh
[ -x bin/warren ] || make build
[ -d test/e2e/node_modules ] || (cd test/e2e && npm ci --silent)
runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(runc runsc runsc-nopool runsc-frozen)
export BENCH_PAUSE_MB=${BENCH_PAUSE_MB:-100,400}
key="e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')"
for run in "${runtimes[@]}"; do
	rt=${run%-frozen}
	rt=${rt%-nopool}
	serve_flags=(--pool-size=100 --pool-memory-mb=4096)
	bench_flags=(--plot-dir "${BENCH_PLOT_DIR:-docs/img}")
	case $run in
	runsc) serve_flags+=(--checkpoint-after=0) ;;
	*-nopool) serve_flags=(--pool-size=0) bench_flags+=(--pause=false --templates=false) ;;
	*-frozen) bench_flags+=(--only-pause) ;;
	esac
	read -ra more <<<"${BENCH_SERVE_FLAGS:-}"
	serve_flags+=("${more[@]}")
	read -ra more <<<"${BENCH_FLAGS:-}"
	bench_flags+=("${more[@]}")
	data=$(mktemp -d /tmp/warren-bench-XXXXXX)
	port=$((20000 + RANDOM % 20000))
	WARREN_API_KEY=$key ./bin/warren serve --listen 127.0.0.1:$port --data-dir "$data" \
		--runtime "$rt" --bridge wbench0 --subnet 10.231.248.0/22 --team-max-sandboxes=0 "${serve_flags[@]}" >"$data/serve.log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' EXIT
	wait_healthy $port $pid "$data/serve.log"
	echo "## $run ${serve_flags[*]}"
	E2B_API_URL=http://127.0.0.1:$port E2B_API_KEY=$key ./bin/warren bench --runtime "$run" \
		--data-dir "$data" "${bench_flags[@]}"
	kill -TERM $pid
	wait $pid || true
	trap - EXIT
	rm -rf "$data"
done
