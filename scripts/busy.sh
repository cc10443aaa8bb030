#!/usr/bin/env bash
# busy.sh: what many busy sandboxes do to everyone else (docs/benchmarks.md,
# "Busy neighbours"). As root: for each runtime (default runsc), starts a
# server with default flags but pools off, and runs `warren bench --busy N`:
# a command in an idle sandbox and cold creates, on a quiet machine and then
# with N sandboxes spinning every vCPU they have. Any failure (a 503, a
# command stream cut short) fails the run.
#
# Usage: sudo scripts/busy.sh [runtime...]     BUSY_N (default 50)
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/serve.sh
[ -x bin/warren ] || make build
runtimes=("$@")
[ ${#runtimes[@]} -gt 0 ] || runtimes=(runsc)
key="e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')"
for rt in "${runtimes[@]}"; do
	data=$(mktemp -d /tmp/warren-busy-XXXXXX)
	port=$((20000 + RANDOM % 20000))
	WARREN_API_KEY=$key ./bin/warren serve --listen 127.0.0.1:$port --data-dir "$data" \
		--runtime "$rt" --bridge wbusy0 --subnet 10.231.240.0/22 --team-max-sandboxes=0 \
		--pool-size=0 --code-interpreter=false ${BUSY_SERVE_FLAGS:-} >"$data/serve.log" 2>&1 &
	pid=$!
	trap 'kill $pid 2>/dev/null || true' EXIT
	wait_healthy $port $pid "$data/serve.log"
	echo "## $rt"
	status=0
	E2B_API_URL=http://127.0.0.1:$port E2B_API_KEY=$key ./bin/warren bench --runtime "$rt" \
		--data-dir "$data" --busy "${BUSY_N:-50}" || status=$?
	echo "start queue at the end: $(curl -s -H "X-API-KEY: $key" "http://127.0.0.1:$port/admission")"
	# The bench kills what it made; a run cut short may leave some.
	for id in $(curl -s -H "X-API-KEY: $key" "http://127.0.0.1:$port/v2/sandboxes?limit=100" | grep -o '"sandboxID":"[a-z0-9]*"' | cut -d'"' -f4); do
		curl -s -o /dev/null -X DELETE -H "X-API-KEY: $key" "http://127.0.0.1:$port/sandboxes/$id"
	done
	kill -TERM $pid
	wait $pid || true
	trap - EXIT
	[ -n "${BUSY_KEEP_LOG:-}" ] && cp "$data/serve.log" "$BUSY_KEEP_LOG"
	rm -rf "$data"
	[ $status -eq 0 ] || exit $status
done
