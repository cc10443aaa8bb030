// Package runtimetest is the conformance suite of runtime.Backend. Every
// backend runs it from its own tests:
//
//	runtimetest.Run(t, newBackend, runtimetest.Real(), runtimetest.LeakCheck(leaks))
//
// Without options the suite checks what any backend, the in-memory fake
// included, must do: the lifecycle and its state machine, error classes,
// idempotent Destroy, concurrency. Real() adds what only a backend running
// real processes can show: the init listens and the host reaches it at the
// sandbox's address, Stats reads real usage and limits, pause freezes,
// sandboxes cannot reach each other, AllowInternet=false blocks egress,
// root inside is confined (capabilities, seccomp, read-only binds, the
// template is never written), volumes are shared with the host and
// between sandboxes. LeakCheck adds a host inspection after every
// Destroy and failed Create.
package runtimetest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// Option adjusts what the suite checks.
type Option func(*config)

type config struct {
	real      bool
	ownKernel bool
	leaks     func(id string) []string
	cycles    int
}

// Real declares that the backend really runs the spec's init process and
// networks it, enabling the process, network and confinement checks.
func Real() Option { return func(c *config) { c.real = true } }

// OwnKernel declares that the backend puts a kernel of its own between the
// sandbox and the host (gVisor's sentry, a microVM): the host-facing
// syscall filter lives there, so no seccomp filter is expected inside.
func OwnKernel() Option { return func(c *config) { c.ownKernel = true } }

// LeakCheck installs fn, which lists what the host still holds for id
// (mounts, netns, links, cgroups, files); the suite calls it after every
// Destroy and every failed Create and fails on any leftover.
func LeakCheck(fn func(id string) []string) Option { return func(c *config) { c.leaks = fn } }

// Cycles sets how many create/destroy rounds the churn test runs (20).
func Cycles(n int) Option { return func(c *config) { c.cycles = n } }

// suite is one Run's shared state.
type suite struct {
	cfg        config
	fx         *Fixture
	newBackend func(t *testing.T) runtime.Backend
}

// Run runs the conformance suite. newBackend is called once per subtest and
// must return a backend with no sandboxes, cleaned up through t.Cleanup.
func Run(t *testing.T, newBackend func(t *testing.T) runtime.Backend, opts ...Option) {
	s := &suite{cfg: config{cycles: 20}, newBackend: newBackend}
	for _, o := range opts {
		o(&s.cfg)
	}
	if s.cfg.real {
		s.fx = NewFixture(t)
	} else {
		// No process runs: any existing file will do as the bind source.
		tmp := t.TempDir()
		s.fx = &Fixture{Rootfs: NewRootfs(t, filepath.Join(tmp, "rootfs")), Testinit: filepath.Join(tmp, "rootfs", Sentinel)}
	}
	tests := []struct {
		name string
		fn   func(*testing.T)
		real bool
	}{
		{"Lifecycle", s.testLifecycle, false},
		{"DuplicateID", s.testDuplicateID, false},
		{"InvalidSpec", s.testInvalidSpec, false},
		{"UnknownID", s.testUnknownID, false},
		{"StateErrors", s.testStateErrors, false},
		{"Churn", s.testChurn, false},
		{"StopStart", s.testStopStart, false},
		{"Snapshot", s.testSnapshot, false},
		{"Export", s.testExport, false},
		{"ManyLayers", s.testManyLayers, false},
		{"ConcurrentCreates", s.testConcurrentCreates, false},
		{"Logs", s.testLogs, false},
		{"Background", s.testBackground, false},
		{"Volumes", s.testVolumes, false},
		{"BadInit", s.testBadInit, true},
		{"InitExits", s.testInitExits, true},
		{"Confinement", s.testConfinement, true},
		{"Limits", s.testLimits, true},
		{"Isolation", s.testIsolation, true},
		{"Egress", s.testEgress, true},
		{"TmpOnDisk", s.testTmpOnDisk, true},
		{"MemoryAlerts", s.testMemoryAlerts, true},
	}
	for _, tt := range tests {
		if tt.real && !s.cfg.real {
			continue
		}
		t.Run(tt.name, tt.fn)
	}
}

// spec returns a valid spec for a new sandbox.
func (s *suite) spec(id string) runtime.Spec {
	return runtime.Spec{
		ID:       id,
		Rootfs:   s.fx.Rootfs,
		Hostname: "box-" + id,
		Init: runtime.Process{
			Args: []string{InitPath},
			Env:  []string{"WARREN_TEST=1"},
		},
		Binds:     []runtime.Bind{{Source: s.fx.Testinit, Target: InitPath}},
		Resources: runtime.Resources{CPUCount: 1, MemoryMB: 256, PidsLimit: 256},
		Labels:    map[string]string{"suite": "runtimetest", "id": id},
	}
}

// create creates a sandbox that is destroyed when t ends.
func (s *suite) create(t *testing.T, b runtime.Backend, spec runtime.Spec) *runtime.Instance {
	t.Helper()
	inst, err := b.Create(t.Context(), spec)
	if err != nil {
		t.Fatalf("Create(%s): %v", spec.ID, err)
	}
	t.Cleanup(func() { _ = b.Destroy(context.Background(), spec.ID) })
	return inst
}

// destroy destroys id and checks the host holds nothing for it.
func (s *suite) destroy(t *testing.T, b runtime.Backend, id string) {
	t.Helper()
	if err := b.Destroy(t.Context(), id); err != nil {
		t.Fatalf("Destroy(%s): %v", id, err)
	}
	s.assertGone(t, b, id)
}

// assertGone checks that nothing of id is left, neither in the backend's
// view nor on the host.
func (s *suite) assertGone(t *testing.T, b runtime.Backend, id string) {
	t.Helper()
	if _, err := b.Inspect(t.Context(), id); !errors.Is(err, errdefs.ErrNotFound) {
		t.Errorf("Inspect(%s) after destroy = %v, want ErrNotFound", id, err)
	}
	list, err := b.List(t.Context())
	if err != nil {
		t.Errorf("List: %v", err)
	}
	if slices.ContainsFunc(list, func(i *runtime.Instance) bool { return i.ID == id }) {
		t.Errorf("List still has %s", id)
	}
	if s.cfg.leaks != nil {
		if left := s.cfg.leaks(id); len(left) > 0 {
			t.Errorf("host still holds for %s: %v", id, left)
		}
	}
}

// sentinelUnchanged checks the template's sentinel kept its content.
func (s *suite) sentinelUnchanged(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.fx.Rootfs, Sentinel))
	if err != nil || string(data) != SentinelContent {
		t.Errorf("template sentinel = %q, %v; the template was written to", data, err)
	}
}

// listenTimeout bounds the wait for a new sandbox's init to listen.
const listenTimeout = 20 * time.Second
