#!/usr/bin/env bash
# Where does a sandbox's start get slower as sandboxes add up? This times
# a trivial `runc run` (the base template's rootfs, /bin/true, warren not
# involved) against three kinds of load, each removed before the next:
# N extra host mounts, N empty sibling cgroups, and N live containers
# (`sleep`). Usage, as root after ./scripts/setup.sh:
#   scripts/runc-growth.sh [N]   (default 200)
# Everything it makes lives under a temporary directory and the /wgrowth
# cgroups, and is removed at the end.
set -euo pipefail
N=${1:-200}
ROOTFS=$(ls -d /var/cache/warren/templates/base-*/rootfs | head -1)
W=$(mktemp -d /tmp/warren-growth.XXXXXX)
R=$W/runc
mkdir -p "$W/bundle" "$W/live" "$W/mnt" "$R"

cleanup() {
	for id in $(runc --root "$R" list -q 2>/dev/null); do runc --root "$R" delete -f "$id" >/dev/null 2>&1 || true; done
	for m in "$W"/mnt/*; do mountpoint -q "$m" 2>/dev/null && umount "$m"; done
	for c in /sys/fs/cgroup/*/wgrowth; do
		[ -d "$c" ] || continue
		find "$c" -mindepth 1 -depth -type d -exec rmdir {} + 2>/dev/null || true
		rmdir "$c" 2>/dev/null || true
	done
	rm -rf "$W"
}
trap cleanup EXIT

bundle() { # dir args cgroup
	python3 - "$1" "$2" "$3" "$ROOTFS" <<'PY'
import json, sys
d, args, cg, rootfs = sys.argv[1:]
with open(d + "/config.json") as f:
    s = json.load(f)
s["root"] = {"path": rootfs, "readonly": True}
s["process"]["terminal"] = False
s["process"]["args"] = args.split()
s["linux"]["cgroupsPath"] = cg
s["linux"]["namespaces"] = [{"type": t} for t in ["pid", "ipc", "uts", "mount", "network"]]
with open(d + "/config.json", "w") as f:
    json.dump(s, f)
PY
}
(cd "$W/bundle" && runc spec)
cp "$W/bundle/config.json" "$W/live/config.json"
bundle "$W/bundle" /bin/true /wgrowth/probe

p50() { # median of 15 runs, ms
	for i in $(seq 1 15); do
		t0=$(date +%s%N)
		runc --root "$R" run --bundle "$W/bundle" "probe$i" >/dev/null 2>&1
		echo $((($(date +%s%N) - t0) / 1000000))
	done | sort -n | sed -n 8p
}

base=$(p50)
echo "runc run /bin/true, p50 of 15: $base ms with nothing added"

for i in $(seq 1 "$N"); do mkdir "$W/mnt/$i"; mount -t tmpfs -o size=1m tmpfs "$W/mnt/$i"; done
echo "  with $N more host mounts: $(p50) ms"
for i in $(seq 1 "$N"); do umount "$W/mnt/$i"; done

for c in /sys/fs/cgroup/*/; do
	[ -L "${c%/}" ] && continue
	for i in $(seq 1 "$N"); do mkdir -p "${c}wgrowth/d$i"; done
done
echo "  with $N empty sibling cgroups in every controller: $(p50) ms"
for c in /sys/fs/cgroup/*/wgrowth; do [ -d "$c" ] && find "$c" -mindepth 1 -maxdepth 1 -name 'd*' -type d -exec rmdir {} +; done

for i in $(seq 1 "$N"); do
	bundle "$W/live" "/bin/sleep 100000" "/wgrowth/live$i"
	runc --root "$R" run -d --bundle "$W/live" "live$i" >/dev/null 2>&1 </dev/null
done
echo "  with $N live containers (sleep): $(p50) ms"
for i in $(seq 1 "$N"); do runc --root "$R" delete -f "live$i" >/dev/null 2>&1; done
echo "  again with nothing added: $(p50) ms"
