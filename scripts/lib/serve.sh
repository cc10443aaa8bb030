# Sourced by the benchmark scripts: helpers around a `warren serve` they start.

# wait_healthy PORT PID LOG: waits (up to 5 minutes) until the server on
# 127.0.0.1:PORT answers GET /health; if process PID exits first, prints
# LOG and exits 1.
wait_healthy() {
	local port=$1 pid=$2 log=$3
	for _ in $(seq 600); do
		curl -sf "http://127.0.0.1:$port/health" >/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || { cat "$log"; exit 1; }
		sleep 0.5
	done
}
