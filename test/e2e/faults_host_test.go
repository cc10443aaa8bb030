package e2e

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// checkHostHolds fails t unless the host holds everything of the live
// sandboxes and nothing of the gone ones, and the server's bridge, loop
// devices and nftables sets hold the live ones only.
func checkHostHolds(t *testing.T, s *server, rt, bridge string, live, gone []string) {
	t.Helper()
	nft := nftSets(bridge)
	for _, id := range gone {
		if left := sandboxOnHost(s, rt, bridge, id, nft); len(left) > 0 {
			t.Errorf("gone sandbox %s left: %v", id, left)
		}
	}
	for _, id := range live {
		if held := sandboxOnHost(s, rt, bridge, id, nft); len(held) < 5 {
			t.Errorf("live sandbox %s holds only %v", id, held)
		}
	}
	ports, _ := os.ReadDir(filepath.Join("/sys/class/net", bridge, "brif"))
	if len(ports) != len(live) {
		t.Errorf("bridge %s has %d ports for %d live sandboxes", bridge, len(ports), len(live))
	}
	if loops := loopsOn(s.dataDir); len(loops) > len(live) {
		t.Errorf("%d loop devices on the data dir for %d live sandboxes: %v", len(loops), len(live), loops)
	}
	dirs := buildSandboxDirs(s)
	if len(dirs) != len(live) {
		t.Errorf("%d sandbox dirs for %d live sandboxes: %v", len(dirs), len(live), dirs)
	}
}

// sandboxOnHost lists what the host holds of sandbox id: state dir, run
// root entries, netns, host veth, nftables set entries, cgroups and
// processes. nft is the server's bridge table, listed once.
func sandboxOnHost(s *server, rt, bridge, id, nft string) []string {
	var held []string
	veth := vethOf(bridge, id)
	for _, p := range []string{
		filepath.Join(s.dataDir, "sandboxes", rt, id),
		"/run/netns/" + bridge + "-" + id,
		"/sys/class/net/" + veth,
	} {
		if _, err := os.Lstat(p); err == nil {
			held = append(held, p)
		}
	}
	if strings.Contains(nft, veth) {
		held = append(held, "nftables entry "+veth)
	}
	runtimeState, _ := filepath.Glob(filepath.Join(runRootOf(s.dataDir), rt, id+"*"))
	cgs, _ := filepath.Glob("/sys/fs/cgroup/*/warren/" + id)
	cg2, _ := filepath.Glob("/sys/fs/cgroup/warren/" + id)
	held = append(append(append(held, runtimeState...), cgs...), cg2...)
	if pids := pidsOf(id); len(pids) > 0 {
		held = append(held, fmt.Sprint("processes ", pids))
	}
	return held
}

// vethOf is the host end of sandbox id's veth pair, as internal/network
// names it: "wv" and the first 5 bytes of sha256("<bridge>/<id>") in hex.
func vethOf(bridge, id string) string {
	sum := sha256.Sum256([]byte(bridge + "/" + id))
	return "wv" + hex.EncodeToString(sum[:5])
}

// nftSets is the server's bridge-family table (its ports and interfaces
// sets), "" when there is none.
func nftSets(bridge string) string {
	out, err := exec.Command("nft", "list", "table", "bridge", bridge).CombinedOutput()
	if err != nil {
		return ""
	}
	return string(out)
}

// loopsOn lists the loop devices whose backing file is under dir.
func loopsOn(dir string) []string {
	var loops []string
	files, _ := filepath.Glob("/sys/block/loop*/loop/backing_file")
	for _, f := range files {
		if b, err := os.ReadFile(f); err == nil && strings.HasPrefix(string(b), dir) {
			loops = append(loops, strings.TrimSpace(string(b)))
		}
	}
	return loops
}

// checkServerGone fails t if the stopped server, with no sandbox left,
// left its bridge, nftables tables, netns, mounts, loop devices, sandbox
// dirs or run root on the host.
func checkServerGone(t *testing.T, s *server, bridge string) {
	t.Helper()
	var left []string
	if _, err := os.Lstat("/sys/class/net/" + bridge); err == nil {
		left = append(left, "bridge "+bridge)
	}
	for _, family := range []string{"inet", "bridge"} {
		if exec.Command("nft", "list", "table", family, bridge).Run() == nil {
			left = append(left, "nftables table "+family+" "+bridge)
		}
	}
	ns, _ := filepath.Glob("/run/netns/" + bridge + "-*")
	left = append(left, ns...)
	if m, _ := mountPointsUnder(s.dataDir); len(m) > 0 {
		left = append(left, fmt.Sprint("mounts ", m))
	}
	left = append(left, loopsOn(s.dataDir)...)
	left = append(left, buildSandboxDirs(s)...)
	if _, err := os.Lstat(runRootOf(s.dataDir)); err == nil {
		left = append(left, "run root "+runRootOf(s.dataDir))
	}
	if len(left) > 0 {
		t.Errorf("after killing every sandbox and a clean stop, the host holds: %v", left)
	}
}
