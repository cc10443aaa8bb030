#!/usr/bin/env bash
# Before and after: for each runtime, runs the same `warren bench` rows
# against a server of BEFORE_BIN (a warren binary built from an older
# commit, with its envd and interpreter beside it) and against bin/warren,
# each on a fresh data dir, one after the other, then prints both with
# `warren bench --compare` (each as ratios to the baseline of its own run)
# and draws one CDF per row into BENCH_PLOT_DIR (default docs/img).
# The harness is always this tree's bin/warren; only the server differs.
# Usage: scripts/bench-compare.sh BEFORE_BIN [runtime...]   (default: runsc runc)
# BENCH_FLAGS: the rows (default --only-resume); BENCH_NAME: file prefix
# of the saved reports in BENCH_OUT (default /var/tmp/warren-bench);
# BENCH_SERVE_FLAGS: more `warren serve` flags (default --default-memory=2048,
# room for 1 GiB held; set it empty for the defaults). runsc servers run with
# --checkpoint-after=0 unless BENCH_FROZEN=1, so a pause goes to disk.
# BENCH_BRIDGE/BENCH_SUBNET pick the servers' network (default wbench1,
# 10.231.252.0/22).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/serve.sh
before=${1:?usage: scripts/bench-compare.sh BEFORE_BIN [runtime...]}
shift
[ -x "$before" ] || { echo "no binary $before" >&2; exit 1; }
[ -x bin/warren ] || make build
[ -d test/e2e/node_modules ] || (cd test/e2e && npm ci --silent)
runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(runsc runc)
read -ra bench_flags <<<"${BENCH_FLAGS:---only-resume}"
read -ra more_serve <<<"${BENCH_SERVE_FLAGS---default-memory=2048}"
name=${BENCH_NAME:-resume}
out=${BENCH_OUT:-/var/tmp/warren-bench}
mkdir -p "$out"
key="e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')"
for rt in "${runtimes[@]}"; do
	for label in before after; do
		bin=$before
		[ $label = after ] && bin=bin/warren
		serve_flags=("${more_serve[@]}")
		[ "$rt" = runsc ] && [ -z "${BENCH_FROZEN:-}" ] && serve_flags+=(--checkpoint-after=0)
		data=$(mktemp -d /tmp/warren-bench-XXXXXX)
		port=$((20000 + RANDOM % 20000))
		WARREN_API_KEY=$key "$bin" serve --listen 127.0.0.1:$port --data-dir "$data" --runtime "$rt" \
			--bridge "${BENCH_BRIDGE:-wbench1}" --subnet "${BENCH_SUBNET:-10.231.252.0/22}" \
			--team-max-sandboxes=0 "${serve_flags[@]}" >"$data/serve.log" 2>&1 &
		pid=$!
		trap 'kill $pid 2>/dev/null || true' EXIT
		wait_healthy $port $pid "$data/serve.log"
		echo "## $rt $label: $bin serve ${serve_flags[*]}"
		E2B_API_URL=http://127.0.0.1:$port E2B_API_KEY=$key ./bin/warren bench --runtime "$rt" --label $label \
			--data-dir "$data" --save "$out/$name-$rt-$label.json" "${bench_flags[@]}" || status=$?
		kill -TERM $pid
		wait $pid || true
		trap - EXIT
		cp "$data/serve.log" "$out/$name-$rt-$label.serve.log" 2>/dev/null || true
		rm -rf "$data"
		[ "${status:-0}" = 0 ] || { echo "bench failed ($status); server log: $out/$name-$rt-$label.serve.log" >&2; exit 1; }
	done
	echo "## $rt: before and after"
	./bin/warren bench --compare "$out/$name-$rt-before.json,$out/$name-$rt-after.json" --plot-dir "${BENCH_PLOT_DIR:-docs/img}"
done
