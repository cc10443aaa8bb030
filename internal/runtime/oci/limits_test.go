package oci

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestCgroupLimitsApplied reads the limits back from the cgroup files the
// runtime wrote: what Stats does not show (pids, swap) included.
func TestCgroupLimitsApplied(t *testing.T) {
	testutil.RequiresRoot(t)
	for rt, bin := range map[string]func(testing.TB) string{
		Runc:  func(t testing.TB) string { return testutil.RequiresRunc(t) },
		Runsc: requiresStaticRunsc,
	} {
		t.Run(rt, func(t *testing.T) {
			e := newEnv(t, rt, bin(t))
			fx := runtimetest.NewFixture(t)
			spec := specFor(fx, runtimetest.NewID())
			spec.Resources.PidsLimit, spec.Resources.MemoryMB, spec.Resources.CPUCount = 77, 200, 1
			if _, err := e.b.Create(t.Context(), spec); err != nil {
				t.Fatal(err)
			}
			path := e.b.cgroupPath(spec.ID)
			mem := uint64(200 << 20)
			if rt == Runsc {
				mem += sentryHeadroom(200) // raised after boot
			}
			memStr := fmt.Sprint(mem)
			want := map[string]string{"pids.max": "77"}
			if e.b.cg.v2 {
				want["memory.max"], want["cpu.max"] = memStr, "100000 100000"
			} else {
				want["memory.limit_in_bytes"], want["cpu.cfs_quota_us"] = memStr, "100000"
				if e.b.swap {
					want["memory.memsw.limit_in_bytes"] = memStr
				}
			}
			// What the sandbox is said to have stays its own limit.
			if st, err := e.b.Stats(t.Context(), spec.ID); err != nil || st.MemoryLimit != 200<<20 {
				t.Errorf("Stats memory limit = %v, %v; want %d", st, err, 200<<20)
			}
			for file, v := range want {
				controller, _, _ := strings.Cut(file, ".")
				if controller == "memsw" {
					controller = "memory"
				}
				dir := e.b.cg.controllerDir(controller, path)
				data, err := os.ReadFile(filepath.Join(dir, file))
				if err != nil || strings.TrimSpace(string(data)) != v {
					t.Errorf("%s = %q, %v; want %s", file, data, err, v)
				}
			}
		})
	}
}
