package oci

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
)

func TestAddMountParsesHierarchies(t *testing.T) {
	t.Parallel()
	lines := []string{
		"30 26 0:26 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct",
		"31 26 0:27 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory",
		"32 26 0:28 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd",
		"33 26 0:29 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate",
		"34 26 0:30 / /mnt/with\\040space rw - ext4 /dev/vda rw",
	}
	mounts, err := mountinfo.GetMountsFromReader(strings.NewReader(strings.Join(lines, "\n")), nil)
	if err != nil {
		t.Fatal(err)
	}
	cg := &cgroups{v1: map[string]string{}}
	for _, m := range mounts {
		cg.addMount(m)
	}
	want := map[string]string{
		"cpu":          "/sys/fs/cgroup/cpu,cpuacct",
		"cpuacct":      "/sys/fs/cgroup/cpu,cpuacct",
		"memory":       "/sys/fs/cgroup/memory",
		"name=systemd": "/sys/fs/cgroup/systemd",
	}
	for k, v := range want {
		if cg.v1[k] != v {
			t.Errorf("v1[%s] = %q, want %q", k, cg.v1[k], v)
		}
	}
	if len(cg.v1) != len(want) || cg.unified != "/sys/fs/cgroup/unified" {
		t.Errorf("v1 = %v, unified = %q", cg.v1, cg.unified)
	}
}

// TestCgroupsMissing: a server in a mount namespace without the host's
// hierarchy (`ip netns exec` remounts /sys) must refuse to start rather
// than fail every create.
func TestCgroupsMissing(t *testing.T) {
	t.Parallel()
	v2 := func(controllers string) *cgroups {
		dir := t.TempDir()
		if controllers != "-" {
			if err := os.WriteFile(filepath.Join(dir, "cgroup.controllers"), []byte(controllers), 0o444); err != nil {
				t.Fatal(err)
			}
		}
		return &cgroups{v2: true, unified: dir, v1: map[string]string{}}
	}
	full := map[string]string{"cpu": "/c", "cpuacct": "/c", "memory": "/m", "pids": "/p"}
	for _, tc := range []struct {
		name string
		cg   *cgroups
		want string
	}{
		{"v1", &cgroups{v1: full}, "[]"},
		{"v1 without pids", &cgroups{v1: map[string]string{"cpu": "/c", "memory": "/m"}}, "[pids]"},
		{"nothing mounted", &cgroups{v1: map[string]string{}}, "[cpu memory pids]"},
		{"v2", v2("cpuset cpu io memory pids\n"), "[]"},
		{"cgroup2 on a v1 host", v2("\n"), "[cpu memory pids]"},
		{"no cgroup.controllers", v2("-"), "[cpu memory pids]"},
	} {
		if got := fmt.Sprint(tc.cg.missing(sandboxControllers)); got != tc.want {
			t.Errorf("%s: missing = %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestReadV2Stats(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"cpu.stat":       "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n",
		"memory.current": "10485760\n",
		"memory.stat":    "anon 6291456\nfile 4194304\n",
		"memory.max":     "536870912\n",
		"cpu.max":        "150000 100000\n",
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := readV2(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := cgroupStats{cpuCount: 2, cpuNanos: 1_500_000, memUsed: 6 << 20, memCache: 4 << 20, memLimit: 512 << 20}
	if *s != want {
		t.Fatalf("readV2 = %+v, want %+v", *s, want)
	}
}

func TestParseCPUMax(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{
		"max 100000":    0,
		"200000 100000": 2,
		"50000 100000":  1,
		"garbage":       0,
	} {
		if got := parseCPUMax(in); got != want {
			t.Errorf("parseCPUMax(%q) = %d, want %d", in, got, want)
		}
	}
}
