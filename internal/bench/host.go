package bench

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/moby/sys/mountinfo"
)

// hostBusy is the host's busy CPU over window, in % of one core, from
// /proc/stat (user, nice, system, irq, softirq, steal).
func hostBusy(window time.Duration) float64 {
	b1, _ := cpuJiffies()
	time.Sleep(window)
	b2, _ := cpuJiffies()
	// USER_HZ is 100 on Linux: a jiffy is 10 ms.
	return float64(b2-b1) * 10 / float64(window.Milliseconds()) * 100
}

func cpuJiffies() (busy, total uint64) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	for i, v := range f[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy, total
}

// memAvailableMB is the host's MemAvailable in MB.
func memAvailableMB() int {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return kb >> 10
		}
	}
	return 0
}

// checkReclaimed waits (bounded) until nothing of the killed sandboxes is
// left on the host, and the host's available memory is back within 5 % of
// where it started, and says what is left if not.
func checkReclaimed(c *Config, d DensityConfig, ids []string, baseMem int) error {
	var left []string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		left = leftOnHost(c, d, ids)
		mem := memAvailableMB()
		if float64(mem) < 0.95*float64(baseMem) {
			left = append(left, fmt.Sprintf("host memory available %d MB, was %d MB", mem, baseMem))
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if len(left) > 0 {
		return fmt.Errorf("bench: after killing %d sandboxes the host still holds: %v", len(ids), left)
	}
	fmt.Printf("all %d sandboxes killed; mounts, cgroups, netns, bridge ports and state dirs reclaimed; host memory within 5 %% of the start (%d MB available)\n", len(ids), memAvailableMB())
	return nil
}

func leftOnHost(c *Config, d DensityConfig, ids []string) []string {
	var left []string
	if c.DataDir != "" {
		if m, _ := mountinfo.GetMounts(mountinfo.PrefixFilter(filepath.Clean(c.DataDir))); len(m) > 0 {
			left = append(left, fmt.Sprintf("%d mounts under the data dir", len(m)))
		}
	}
	if d.Bridge != "" {
		if ports, _ := os.ReadDir(filepath.Join("/sys/class/net", d.Bridge, "brif")); len(ports) > 0 {
			left = append(left, fmt.Sprintf("%d ports on %s", len(ports), d.Bridge))
		}
		if ns, _ := filepath.Glob("/run/netns/" + d.Bridge + "-*"); len(ns) > 0 {
			left = append(left, fmt.Sprintf("%d netns", len(ns)))
		}
	}
	for _, set := range []string{"ports", "ifaces", "internet"} {
		if d.Bridge == "" {
			break
		}
		out, err := exec.Command("nft", "list", "set", "inet", d.Bridge, set).CombinedOutput()
		if err == nil && strings.Contains(string(out), "elements =") {
			left = append(left, "elements in nftables set "+set)
		}
	}
	cgs, states := 0, 0
	for _, id := range ids {
		if m, _ := filepath.Glob("/sys/fs/cgroup/*/warren/" + id); len(m) > 0 {
			cgs++
		}
		if m, _ := filepath.Glob("/sys/fs/cgroup/warren/" + id); len(m) > 0 {
			cgs++
		}
		if c.DataDir != "" {
			if m, _ := filepath.Glob(filepath.Join(c.DataDir, "sandboxes", "*", id)); len(m) > 0 {
				states++
			}
		}
	}
	if cgs > 0 {
		left = append(left, fmt.Sprintf("%d cgroups", cgs))
	}
	if states > 0 {
		left = append(left, fmt.Sprintf("%d state dirs", states))
	}
	return left
}
