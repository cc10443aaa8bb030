package oci

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/network/nettest"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// testNetwork uses a bridge, table and netns prefix of this package's own
// and a free range: a running warren, and other tests running at the same
// time, are never touched.
func testNetwork(t testing.TB) network.Options {
	return network.Options{
		Bridge:      "wrno" + testToken,
		Subnet:      nettest.FreeSubnet(t, netip.MustParsePrefix("10.192.0.0/11"), 24),
		Table:       "wrnocitest" + testToken,
		NetnsPrefix: "wrno" + testToken + "-",
	}
}

// testToken makes this test binary's names (bridge, table, netns files,
// cgroups) unique on the host, so concurrent runs never collide.
var testToken = nettest.Token(3)

// env is one test backend with everything it needs to be inspected.
type env struct {
	b     *Backend
	net   *network.Manager
	opts  Options
	leaks runtimetest.HostLeaks
}

// newEnv builds a network manager and backend for rt in fresh temp dirs.
// Everything is torn down when t ends: sandboxes left by a failed test, the
// bridge and nftables tables, and the test's cgroup parent.
func newEnv(t testing.TB, rt, binary string) *env {
	t.Helper()
	ctx := context.Background()
	nm, err := network.New(ctx, testNetwork(t))
	if err != nil {
		t.Fatalf("network.New: %v", err)
	}
	t.Cleanup(func() {
		// Runs after destroyAll: anything left on the bridge is a leak.
		if removed, err := nm.Sweep(ctx); len(removed) > 0 || err != nil {
			t.Errorf("network leaked (now removed): %v, %v", removed, err)
		}
		_ = nm.Teardown(ctx)
	})
	tmp := t.TempDir()
	opts := Options{
		Runtime:      rt,
		Binary:       binary,
		StateRoot:    filepath.Join(tmp, "state"),
		RunRoot:      filepath.Join(tmp, "run"),
		Network:      nm,
		CgroupParent: "/wrntest-" + rt + "-" + testToken,
		// Every conformance case runs on sandbox disks of their own, so
		// snapshots, stops and restores cover the quota's paths too.
		DiskQuota: true,
	}
	b, err := New(ctx, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { destroyAll(t, b) })
	return &env{b: b, net: nm, opts: opts, leaks: runtimetest.HostLeaks{
		StateRoot:    opts.StateRoot,
		RuntimeRoot:  filepath.Join(opts.RunRoot, rt),
		NetnsPath:    nm.NetnsPath,
		HostVeth:     nm.HostVeth,
		CgroupParent: opts.CgroupParent,
	}}
}

// destroyAll destroys whatever sandboxes a test left and removes the
// cgroup parent (the runtimes create it; nobody else removes it).
func destroyAll(t testing.TB, b *Backend) {
	ids, _ := b.stateDirs()
	for _, id := range ids {
		if err := b.Destroy(context.Background(), id); err != nil {
			t.Errorf("cleanup: destroying %s: %v", id, err)
		}
	}
	for _, d := range b.cg.dirs(b.opts.CgroupParent) {
		if err := os.Remove(d); err != nil && !os.IsNotExist(err) {
			t.Errorf("cleanup: removing cgroup parent %s: %v", d, err)
		}
	}
}

func runConformance(t *testing.T, rt, binary string) {
	testutil.RequiresRoot(t)
	var leaks runtimetest.HostLeaks
	opts := []runtimetest.Option{runtimetest.Real(), runtimetest.LeakCheck(func(id string) []string { return leaks.Check(id) })}
	if rt == Runsc {
		opts = append(opts, runtimetest.OwnKernel())
	}
	runtimetest.Run(t, func(t *testing.T) runtime.Backend {
		e := newEnv(t, rt, binary)
		leaks = e.leaks
		return e.b
	}, opts...)
}

func TestConformanceRunc(t *testing.T) {
	testutil.RequiresRoot(t)
	runConformance(t, Runc, testutil.RequiresRunc(t))
}

func TestConformanceRunsc(t *testing.T) {
	testutil.RequiresRoot(t)
	runConformance(t, Runsc, requiresStaticRunsc(t))
}

// requiresStaticRunsc skips unless a usable runsc is installed (override the
// path with WARREN_RUNSC).
func requiresStaticRunsc(t testing.TB) string {
	t.Helper()
	return testutil.RequiresRunsc(t)
}
