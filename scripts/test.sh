#!/usr/bin/env bash
# The README's test command: sets up, then runs every test. As root this
# includes the runtime conformance suite on runc and runsc and the
# end-to-end suite driving real `warren serve` processes with the official
# npm SDKs.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH=$PATH:/usr/local/go/bin
./scripts/setup.sh
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
