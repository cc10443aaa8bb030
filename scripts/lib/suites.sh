# Sourced by scripts/official-suites.sh: setting up E2B's code-interpreter
# suites once, a TLS warren server for them, running and summarizing them.

SUITES=${SUITES:-js py}
SUITES_DIR=${SUITES_DIR:-/work/ci-suite}
SUITES_ADDR=${SUITES_ADDR:-127.0.0.31}
SUITES_BRIDGE=${SUITES_BRIDGE:-wsuite1}
SUITES_SUBNET=${SUITES_SUBNET:-10.231.251.0/24}
SUITES_TIMEOUT=${SUITES_TIMEOUT:-2400}
SUITES_DOMAIN=suite.test
MIRROR=${MIRROR:-/work/.mirror}
CI_GIT=${CI_GIT:-$MIRROR/e2b-dev+code-interpreter/repo}
E2B_GIT=${E2B_GIT:-$MIRROR/e2b-dev+E2B/repo}
HTTPX_GIT=${HTTPX_GIT:-$MIRROR/encode+httpx/repo}
HTTPCORE_GIT=${HTTPCORE_GIT:-$MIRROR/encode+httpcore/repo}
DFP_GIT=${DFP_GIT:-$MIRROR/containerbuildsystem+dockerfile-parse/repo}
# e2b 2.34.0: the commit before "migrate envd RPC to the official connectrpc
# client", the last Python SDK that runs on httpx/httpcore alone.
E2B_PY_REV=5e141a765ff15135f0aa18ad3de98dce173909d3
HTTPX_REV=0.28.1
HTTPCORE_REV=1.0.7 # the newest whose h11 range (<0.15) takes Debian's 0.14
DFP_REV=2.0.1
# What the SDKs and the tests import, as Debian packages them.
PY_DEBS=(python3-pytest python3-pytest-asyncio python3-pytest-xdist
	python3-pytest-timeout python3-h2 python3-h11 python3-anyio python3-certifi
	python3-idna python3-protobuf python3-wcmatch python3-rich python3-attr
	python3-typing-extensions python3-dateutil python3-packaging python3-dotenv)

# unpack GIT REV PATH DEST: PATH of GIT at REV into DEST, unless DEST/MARK is there.
unpack() {
	local git=$1 rev=$2 path=$3 dest=$4 mark=$5
	[ -e "$dest/$mark" ] && return 0
	[ -d "$git" ] || { echo "official-suites: no git snapshot at $git" >&2; exit 2; }
	mkdir -p "$dest"
	git --git-dir="$git" archive "$rev" $path | tar -x -C "$dest"
}

suites_setup() {
	mkdir -p "$SUITES_DIR/logs"
	unpack "$CI_GIT" HEAD "" "$SUITES_DIR" js/tests/setup.ts
	if [ ! -x "$SUITES_DIR/js/node_modules/.bin/vitest" ]; then
		(cd "$SUITES_DIR/js" && npm install --no-audit --no-fund)
	fi
	local missing=() p
	for p in "${PY_DEBS[@]}"; do
		dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}" ||
			{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; }
	fi
	local sdk=$SUITES_DIR/e2b-python deps=$SUITES_DIR/pydeps
	if [ ! -e "$sdk/e2b/__init__.py" ]; then
		mkdir -p "$sdk"
		git --git-dir="$E2B_GIT" archive "$E2B_PY_REV" packages/python-sdk |
			tar -x -C "$sdk" --strip-components=2
		# The SDK reads its own version from its installed metadata.
		local v
		v=$(sed -n 's/^version = "\(.*\)"/\1/p' "$sdk/pyproject.toml" | head -1)
		mkdir -p "$sdk/e2b-$v.dist-info"
		printf 'Metadata-Version: 2.1\nName: e2b\nVersion: %s\n' "$v" >"$sdk/e2b-$v.dist-info/METADATA"
	fi
	unpack "$HTTPX_GIT" "$HTTPX_REV" httpx "$deps" httpx/__init__.py
	unpack "$HTTPCORE_GIT" "$HTTPCORE_REV" httpcore "$deps" httpcore/__init__.py
	unpack "$DFP_GIT" "$DFP_REV" dockerfile_parse "$deps" dockerfile_parse/__init__.py
}

# serve_start RUNTIME: a fresh warren server (data dir, key) on SUITES_ADDR:443.
serve_start() {
	local rt=$1
	data=$SUITES_DIR/run/$rt
	# A server that was killed may have left its sandboxes' mounts there.
	if awk -v d="$data/" 'index($2, d) == 1 { found = 1 } END { exit !found }' /proc/mounts; then
		echo "official-suites: mounts are left under $data by an earlier server; unmount them first" >&2
		exit 1
	fi
	rm -rf "$data"
	mkdir -p "$data"
	key="e2b_$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')"
	local flags=()
	read -ra flags <<<"${SUITES_SERVE_FLAGS:-}"
	WARREN_API_KEY=$key bin/warren serve --runtime "$rt" --listen "$SUITES_ADDR:443" \
		--data-dir "$data" --domain "$SUITES_DOMAIN" --tls \
		--bridge "$SUITES_BRIDGE" --subnet "$SUITES_SUBNET" "${flags[@]}" \
		>"$SUITES_DIR/logs/server-$rt.log" 2>&1 &
	server_pid=$!
	trap serve_stop EXIT
	trap 'exit 130' INT TERM
	echo "warren ($rt) started, pid $server_pid, log $SUITES_DIR/logs/server-$rt.log"
	for _ in $(seq 600); do
		if [ -s "$data/tls/ca.pem" ] && curl -sf --cacert "$data/tls/ca.pem" \
			--resolve "api.$SUITES_DOMAIN:443:$SUITES_ADDR" \
			"https://api.$SUITES_DOMAIN/health" >/dev/null; then
			return 0
		fi
		kill -0 "$server_pid" 2>/dev/null || {
			cat "$SUITES_DIR/logs/server-$rt.log"
			exit 1
		}
		sleep 0.5
	done
	echo "official-suites: warren not healthy after 5 minutes" >&2
	exit 1
}

# serve_stop: stops the server this script started, by its PID.
serve_stop() {
	[ -n "${server_pid:-}" ] || return 0
	kill -TERM "$server_pid" 2>/dev/null || true
	for _ in $(seq 120); do
		kill -0 "$server_pid" 2>/dev/null || break
		sleep 0.5
	done
	kill -KILL "$server_pid" 2>/dev/null || true
	wait "$server_pid" 2>/dev/null || true
	server_pid=
}

# run_suite js|py LOG: runs one suite against the server with E2B's
# variables only, bounded by SUITES_TIMEOUT; its status is the runner's.
run_suite() {
	local suite=$1 log=$2 v
	(
		for v in $(compgen -e | grep -E '^(E2B_|E2E_)'); do unset "$v"; done
		export E2B_API_KEY=$key E2B_DOMAIN=$SUITES_DOMAIN NO_COLOR=1
		export WARREN_TLS_DOMAIN=$SUITES_DOMAIN WARREN_TLS_ADDR=$SUITES_ADDR
		local t=(timeout --kill-after=30 "$SUITES_TIMEOUT")
		case $suite in
		js)
			cd "$SUITES_DIR/js"
			export NODE_EXTRA_CA_CERTS=$data/tls/ca.pem
			export NODE_OPTIONS="--import $root/test/e2e/tls/resolve.mjs"
			echo "e2b (npm) $(node -p "require('e2b/package.json').version")"
			"${t[@]}" ./node_modules/.bin/vitest run --reporter=verbose --maxWorkers=2 "${runner_args[@]}"
			;;
		py)
			cd "$SUITES_DIR/python"
			export SSL_CERT_FILE=$data/tls/ca.pem
			export COLUMNS=250 # the short summary keeps each error whole
			export PYTHONPATH=$root/scripts/lib/pyresolve:$SUITES_DIR/pydeps:$SUITES_DIR/e2b-python:$SUITES_DIR/python
			# pytest.ini adds --numprocesses=2; a test is bounded too, so
			# one that hangs is reported rather than eating the suite's time.
			"${t[@]}" /usr/bin/python3 -m pytest -p no:cacheprovider -rfE --timeout=600 "${runner_args[@]:-tests}"
			;;
		esac
	) >"$log" 2>&1
}

# summarize SUITE RUNTIME LOG STATUS: one line of counts, then each failure.
summarize() {
	local suite=$1 rt=$2 log=$3 r=$4 counts fails
	case $suite in
	js)
		counts=$(grep -E '^ +Tests +' "$log" | tail -1 | sed -E 's/^ +Tests +//')
		fails=$(grep -E '^ FAIL ' "$log" | sed -E 's/^ FAIL +/  FAIL /' | sort -u)
		;;
	py)
		counts=$(grep -E '^=+ .*(passed|failed|error).* in ' "$log" | tail -1 | tr -d '=' | sed -E 's/^ +| +$//g')
		fails=$(grep -E '^(FAILED|ERROR) ' "$log" | sed -E 's/^/  /' | cut -c1-220)
		;;
	esac
	[ "$r" = 124 ] && counts="timed out after ${SUITES_TIMEOUT}s; $counts"
	printf '%s on %s: %s (exit %s, log %s)' "$suite" "$rt" "${counts:-no result}" "$r" "$log"
	[ -z "$fails" ] || printf '\n%s' "$fails"
}
