package runtimetest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// CapEff of Docker's default capability set, and of the same set without
// CAP_NET_RAW (gVisor drops it unless raw sockets are enabled).
const (
	dockerDefaultCapEff = "00000000a80425fb"
	dockerNoRawCapEff   = "00000000a80405fb"
)

// testConfinement checks what the init sees: root with Docker's default
// capabilities, no_new_privs off (sudo must work), a seccomp filter, its
// hostname and /etc/hosts (the filter only where the host kernel runs the
// sandbox's syscalls), a writable rootfs whose writes never reach the
// template, and read-only binds.
func (s *suite) testConfinement(t *testing.T) {
	b := s.newBackend(t)
	spec := s.spec(NewID())
	inst := s.create(t, b, spec)
	c := mustWait(t, inst.IP)

	status := mustCall(t, c, "status")
	if !strings.Contains(status, "CapEff="+dockerDefaultCapEff) && !strings.Contains(status, "CapEff="+dockerNoRawCapEff) {
		t.Errorf("/proc/self/status: %q, want Docker's default capabilities", status)
	}
	if !s.cfg.ownKernel && !strings.Contains(status, "Seccomp=2") {
		t.Errorf("/proc/self/status: %q, want a seccomp filter", status)
	}
	if strings.Contains(status, "NoNewPrivs=1") {
		t.Errorf("/proc/self/status: %q, want no_new_privs off", status)
	}
	checks := []struct{ cmd, want string }{
		{"uid", "0"},
		{"hostname", spec.Hostname},
		{"read /etc/hostname", strconv.Quote(spec.Hostname + "\n")},
		{"write " + Sentinel + " changed", "ok"},
		{"read " + Sentinel, strconv.Quote("changed")},
	}
	for _, tt := range checks {
		if got := mustCall(t, c, tt.cmd); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.cmd, got, tt.want)
		}
	}
	if hosts := mustCall(t, c, "read /etc/hosts"); !strings.Contains(hosts, spec.Hostname) || !strings.Contains(hosts, "localhost") {
		t.Errorf("/etc/hosts = %s; want localhost and %s", hosts, spec.Hostname)
	}
	if got := mustCall(t, c, "write "+InitPath+" x"); !strings.HasPrefix(got, "err ") {
		t.Errorf("writing the read-only bind = %q, want an error", got)
	}
	s.sentinelUnchanged(t)
	s.destroy(t, b, spec.ID)
}

// testLimits checks that the spec's limits reach the cgroup, defaults
// apply to zero fields, and writes inside land in the layer Stats measures.
func (s *suite) testLimits(t *testing.T) {
	b := s.newBackend(t)
	spec := s.spec(NewID())
	spec.Resources.CPUCount, spec.Resources.MemoryMB = 2, 300
	inst := s.create(t, b, spec)
	st, err := b.Stats(t.Context(), spec.ID)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if st.CPUCount != 2 || st.MemoryLimit != 300<<20 {
		t.Errorf("limits cpus %d, memory %d; want 2, %d", st.CPUCount, st.MemoryLimit, 300<<20)
	}
	const fill = 4 << 20
	if out := mustCall(t, mustWait(t, inst.IP), fmt.Sprintf("fill /root/fill %d", fill)); out != "ok" {
		t.Fatalf("fill = %q", out)
	}
	after, err := b.Stats(t.Context(), spec.ID)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if after.DiskUsed < st.DiskUsed+fill {
		t.Errorf("disk used %d -> %d after writing %d bytes inside", st.DiskUsed, after.DiskUsed, fill)
	}
	dflt := s.spec(NewID())
	dflt.Resources = spec.Resources
	dflt.Resources.CPUCount, dflt.Resources.MemoryMB = 0, 0
	s.create(t, b, dflt)
	st, err = b.Stats(t.Context(), dflt.ID)
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if st.CPUCount == 0 || st.MemoryLimit == 0 || st.MemoryLimit > 1<<40 {
		t.Errorf("default limits: cpus %d, memory %d; want both set", st.CPUCount, st.MemoryLimit)
	}
}
