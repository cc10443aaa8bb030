#!/usr/bin/env bash
# Refreshes the browser libraries the dashboard embeds
# (internal/dashboard/static/vendor): their prebuilt dist files and licenses,
# fetched with npm into a temporary directory. Change a version here, run
# the script, and commit what changed; VERSIONS records what is vendored.
set -euo pipefail
cd "$(dirname "$0")/.."

pkgs=(
	"@xterm/xterm@6.0.0"
	"@xterm/addon-fit@0.11.0"
	"uplot@1.6.32"
)
dest=internal/dashboard/static/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

(cd "$tmp" && npm pack --silent "${pkgs[@]}" >/dev/null)
for tgz in "$tmp"/*.tgz; do
	name=$(basename "$tgz" .tgz)
	mkdir -p "$tmp/$name" && tar -xzf "$tgz" -C "$tmp/$name" --strip-components=1
done

rm -rf "$dest" && mkdir -p "$dest"/{xterm,addon-fit,uplot}
x="$tmp/xterm-xterm-6.0.0" f="$tmp/xterm-addon-fit-0.11.0" u="$tmp/uplot-1.6.32"
cp "$x/lib/xterm.mjs" "$x/css/xterm.css" "$x/LICENSE" "$dest/xterm/"
cp "$f/lib/addon-fit.mjs" "$f/LICENSE" "$dest/addon-fit/"
cp "$u/dist/uPlot.esm.js" "$u/dist/uPlot.min.css" "$u/LICENSE" "$dest/uplot/"
# The ES modules name their source maps, which are not vendored.
sed -i '/^\/\/# sourceMappingURL=/d' "$dest"/*/*.mjs "$dest"/*/*.js
printf '%s\n' "${pkgs[@]}" >"$dest/VERSIONS"
echo "vendored into $dest:" && cat "$dest/VERSIONS"
