package runtimetest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/vishvananda/netlink"
)

// HostLeaks inspects the host for anything a backend built on state dirs,
// netns files, veths and cgroups may leave behind for a sandbox id. Its
// Check method is meant for LeakCheck.
type HostLeaks struct {
	StateRoot    string                 // <StateRoot>/<id> must be gone
	RuntimeRoot  string                 // the runtime's --root: no <id>* entries
	NetnsPath    func(id string) string // the pinned netns file must be gone
	HostVeth     func(id string) string // the bridge port must be gone
	CgroupParent string                 // <hierarchy>/<parent>/<id> must be gone
}

// Check lists what the host still holds for id.
func (h HostLeaks) Check(id string) []string {
	var left []string
	dir := filepath.Join(h.StateRoot, id)
	if _, err := os.Lstat(dir); err == nil {
		left = append(left, "state dir "+dir)
	}
	left = append(left, mountsMentioning(dir, h.netnsPath(id))...)
	if h.RuntimeRoot != "" {
		matches, _ := filepath.Glob(filepath.Join(h.RuntimeRoot, id+"*"))
		for _, m := range matches {
			left = append(left, "runtime state "+m)
		}
	}
	if p := h.netnsPath(id); p != "" {
		if _, err := os.Lstat(p); err == nil {
			left = append(left, "netns file "+p)
		}
	}
	if h.HostVeth != nil {
		if _, err := netlink.LinkByName(h.HostVeth(id)); err == nil {
			left = append(left, "link "+h.HostVeth(id))
		}
	}
	if h.CgroupParent != "" {
		for _, pattern := range []string{"/sys/fs/cgroup/*", "/sys/fs/cgroup"} {
			matches, _ := filepath.Glob(filepath.Join(pattern, h.CgroupParent, id))
			for _, m := range matches {
				left = append(left, "cgroup "+m)
			}
		}
	}
	return left
}

func (h HostLeaks) netnsPath(id string) string {
	if h.NetnsPath == nil {
		return ""
	}
	return h.NetnsPath(id)
}

// mountsMentioning lists mount points at or under dir, or equal to file.
func mountsMentioning(dir, file string) []string {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return []string{fmt.Sprintf("reading mountinfo: %v", err)}
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		mp := fields[4]
		if mp == dir || strings.HasPrefix(mp, dir+"/") || (file != "" && mp == file) {
			out = append(out, "mount "+mp)
		}
	}
	return out
}
