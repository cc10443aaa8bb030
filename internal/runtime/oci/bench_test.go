package oci

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// BenchmarkCreateDestroy measures, per runtime, a full warren sandbox
// (network, overlay, cgroup limits, seccomp; Create, wait until the init
// accepts a TCP connection from the host, Destroy) next to the runtime's
// bare minimum measured in the same run: `<runtime> run` of a static
// binary that exits at once, with a read-only rootfs, /proc only and no
// network. Divide warren's ns/op by baseline's for the overhead ratio.
//
//	sudo go test -run '^$' -bench CreateDestroy ./internal/runtime/oci/
func BenchmarkCreateDestroy(b *testing.B) {
	testutil.RequiresRoot(b)
	runtimes := map[string]func(testing.TB) string{
		Runc:  func(t testing.TB) string { return testutil.RequiresRunc(t) },
		Runsc: func(t testing.TB) string { return requiresStaticRunsc(t) },
	}
	for _, rt := range []string{Runc, Runsc} {
		b.Run(rt+"/baseline", func(b *testing.B) { benchBaseline(b, rt, runtimes[rt](b)) })
		b.Run(rt+"/warren", func(b *testing.B) { benchWarren(b, rt, runtimes[rt](b)) })
	}
}

func benchWarren(b *testing.B, rt, binary string) {
	e := newEnv(b, rt, binary)
	fx := runtimetest.NewFixture(b)
	ctx := context.Background()
	var create, listen, destroy time.Duration
	b.ResetTimer()
	for range b.N {
		id := runtimetest.NewID()
		t0 := time.Now()
		inst, err := e.b.Create(ctx, specFor(fx, id))
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		c, err := runtimetest.WaitInit(inst.IP, 20*time.Second)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
		t2 := time.Now()
		if err := e.b.Destroy(ctx, id); err != nil {
			b.Fatal(err)
		}
		create, listen, destroy = create+t1.Sub(t0), listen+t2.Sub(t0), destroy+time.Since(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(create.Milliseconds())/n, "create-ms")
	b.ReportMetric(float64(listen.Milliseconds())/n, "to-listening-ms")
	b.ReportMetric(float64(destroy.Milliseconds())/n, "destroy-ms")
}

func benchBaseline(b *testing.B, rt, binary string) {
	run := baselineRun(b, rt, binary)
	b.ResetTimer()
	for range b.N {
		run()
	}
}

// baselineRun prepares the baseline's bundle and returns one `<rt> run`
// of it.
func baselineRun(b *testing.B, rt, binary string) func() {
	fx := runtimetest.NewFixture(b)
	bundle := b.TempDir()
	rootfs := filepath.Join(bundle, "rootfs")
	for _, d := range []string{"proc", "dev"} {
		if err := os.MkdirAll(filepath.Join(rootfs, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	data, err := os.ReadFile(fx.Testinit)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "init"), data, 0o755); err != nil {
		b.Fatal(err)
	}
	writeBaselineSpec(b, bundle)
	args := []string{"--root", filepath.Join(b.TempDir(), "root")}
	if rt == Runsc {
		args = append(args, "--platform=systrap", "--network=none")
	}
	return func() {
		cmd := exec.Command(binary, append(args, "run", "--bundle", bundle, runtimetest.NewID())...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s run: %v: %s", rt, err, out)
		}
	}
}

// writeBaselineSpec writes the smallest useful bundle config.
func writeBaselineSpec(b *testing.B, bundle string) {
	s := &specs.Spec{
		Version: ociVersion,
		Process: &specs.Process{Args: []string{"/init", "-exit"}, Cwd: "/", Env: []string{"PATH=/"}},
		Root:    &specs.Root{Path: "rootfs", Readonly: true},
		Mounts:  []specs.Mount{{Destination: "/proc", Type: "proc", Source: "proc"}},
		Linux: &specs.Linux{Namespaces: []specs.LinuxNamespace{
			{Type: specs.PIDNamespace}, {Type: specs.IPCNamespace}, {Type: specs.UTSNamespace},
			{Type: specs.MountNamespace}, {Type: specs.NetworkNamespace},
		}},
	}
	data, err := json.Marshal(s)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bundle, configFile), data, 0o600); err != nil {
		b.Fatal(err)
	}
}
