#!/usr/bin/env bash
# Runs every Go fuzz target (func Fuzz* in a *_fuzz_test.go file) for a
# short bounded time, one at a time: `go test -fuzz` takes one target of
# one package. A target that finds a failing input writes it under its
# package's testdata/fuzz/<Target>/ (commit it: plain `go test` then
# replays it as a regression) and makes this script fail after the rest
# have run.
# Usage: scripts/fuzz.sh [Target...]   (default: all)
# FUZZTIME (default 3s) is each target's budget, as `go test -fuzztime`
# takes it: a duration or a count such as 1000x.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
fuzztime=${FUZZTIME:-3s}

# "<package dir> <target>" for every target, in a stable order.
targets=$(grep -H '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' --include='*_fuzz_test.go' -r api internal pkg cmd 2>/dev/null |
	sed -E 's|^(.*)/[^/]+_fuzz_test.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | sort)
if [ $# -gt 0 ]; then
	want=" $* "
	targets=$(echo "$targets" | while read -r dir name; do
		if [[ $want == *" $name "* ]]; then echo "$dir $name"; fi
	done)
fi
[ -n "$targets" ] || { echo "fuzz: no target found" >&2; exit 1; }

# fuzz_one runs one target. Go's coordinator can end a duration budget
# with a bare "context deadline exceeded" and no failing input (a race at
# the deadline, golang/go#75804, fixed after go1.26): that one outcome is
# run again with a count budget, which has no deadline to race.
fuzz_one() {
	local dir=$1 name=$2 budget=$3 out rc
	out=$(mktemp)
	rc=0
	go test "./$dir" -run '^$' -fuzz "^$name\$" -fuzztime "$budget" \
		-fuzzminimizetime 10x -timeout 5m >"$out" 2>&1 || rc=$?
	grep -v '^fuzz: elapsed' "$out" || true
	if [ $rc -ne 0 ] && [[ $budget != *x ]] && grep -q '^    context deadline exceeded$' "$out" &&
		! grep -q 'Failing input written to' "$out"; then
		echo "fuzz: $name hit Go's deadline race (no failing input); running it again for 2000x"
		rc=0
		go test "./$dir" -run '^$' -fuzz "^$name\$" -fuzztime 2000x \
			-fuzzminimizetime 10x -timeout 5m >"$out" 2>&1 || rc=$?
		grep -v '^fuzz: elapsed' "$out" || true
	fi
	rm -f "$out"
	return $rc
}

failed=()
ran=0
start=$SECONDS
while read -r dir name; do
	echo "==> fuzz ./$dir $name ($fuzztime)"
	ran=$((ran + 1))
	# -fuzzminimizetime bounds the minimising of new inputs, which would
	# otherwise eat a short budget; -timeout ends a target that hangs.
	if ! fuzz_one "$dir" "$name" "$fuzztime"; then
		failed+=("./$dir $name")
	fi
done <<<"$targets"

echo
echo "fuzz: $ran targets, $((SECONDS - start))s"
if [ ${#failed[@]} -gt 0 ]; then
	printf 'fuzz: FAILED %s\n' "${failed[@]}"
	echo "fuzz: the failing inputs are under each package's testdata/fuzz/; replay one with go test ./<pkg> -run '<Target>/<file>'"
	exit 1
fi
echo "fuzz: no failure"
