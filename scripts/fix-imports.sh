#!/bin/sh
# Regroups the imports of every Go file (standard library, third-party,
# github.com/warren-sandbox/warren, one group each), as the archtest's
# TestImportGrouping wants. With -n it only lists the files it would change.
set -eu
cd "$(dirname "$0")/.."
if [ "${1:-}" = "-n" ]; then
	exec go run ./internal/archtest/cmd/importgroups .
fi
exec go run ./internal/archtest/cmd/importgroups -w .
