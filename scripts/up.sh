#!/usr/bin/env bash
# The README's first command: set up everything and run the server. The
# first start builds the base template from Debian packages (minutes, with
# progress); later starts reuse the cache.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
exec ./bin/warren serve --listen "${WARREN_LISTEN:-127.0.0.1:3000}" --data-dir "${WARREN_DATA_DIR:-/var/lib/warren}" "$@"
