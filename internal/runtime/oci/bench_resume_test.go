package oci

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// restoreModes are the ways runsc checkpoints and restores, compared in
// one run: eager (the whole image read before the restore returns),
// background loading through the page cache, and what warren does (the
// flags New found: background loading with O_DIRECT reads). Zero pages
// left out of the checkpoint were measured and dropped (memflags.go).
var restoreModes = []struct {
	name string
	mem  func(found memoryFlags) memoryFlags
}{
	{"eager", func(memoryFlags) memoryFlags { return memoryFlags{} }},
	{"background", func(f memoryFlags) memoryFlags {
		f.direct = false
		return f
	}},
	{"warren", func(f memoryFlags) memoryFlags { return f }},
}

// modeSandbox is a sandbox holding memory that is always checkpointed and
// restored in one mode.
type modeSandbox struct {
	mode string
	mem  memoryFlags
	id   string
}

// modeSandboxes makes, for each of restoreModes, a sandbox holding mb
// MiB on e (one backend per test binary: backends share their bridge).
func modeSandboxes(b *testing.B, e *env, fx *runtimetest.Fixture, mb int) []modeSandbox {
	if !slices.Contains(e.b.cli.mem.restore, "--background") {
		b.Fatalf("this runsc cannot restore in the background (lacks %v)", e.b.cli.mem.missing)
	}
	var out []modeSandbox
	for _, m := range restoreModes {
		id := runtimetest.NewID()
		holdMemory(b, e, fx, id, mb)
		out = append(out, modeSandbox{mode: m.name, mem: m.mem(e.b.cli.mem), id: id})
	}
	return out
}

// samples are one metric's measurements, reported as their median.
type samples map[string][]time.Duration

func (s samples) add(name string, d time.Duration) { s[name] = append(s[name], d) }

func (s samples) report(b *testing.B) {
	for name, ds := range s {
		slices.Sort(ds)
		b.ReportMetric(float64(ds[len(ds)/2].Microseconds())/1000, name+"-p50-ms")
	}
}

// BenchmarkResume measures, on runsc, a pause that saves the memory (Stop
// with a checkpoint) and a resume (Start, then the first answer of the
// sandbox's testinit) of a sandbox holding 100 MiB or 1 GiB, in each of
// restoreModes, next to `runc run` of a static binary that exits at once
// (the baseline of docs/benchmarks.md). Each op runs the baseline and one
// cycle per mode, so all of them see the same load on a shared machine.
//
//	sudo go test -run '^$' -bench Resume -benchtime 5x ./internal/runtime/oci/
func BenchmarkResume(b *testing.B) {
	testutil.RequiresRoot(b)
	for _, mb := range []int{100, 1024} {
		b.Run(fmt.Sprintf("%dMiB", mb), func(b *testing.B) { benchResume(b, mb) })
	}
}

func benchResume(b *testing.B, mb int) {
	baseline := baselineRun(b, Runc, testutil.RequiresRunc(b))
	fx := runtimetest.NewFixture(b)
	e := newEnv(b, Runsc, requiresStaticRunsc(b))
	sbs := modeSandboxes(b, e, fx, mb)
	ctx := b.Context()
	s := samples{}
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		baseline()
		s.add("baseline", time.Since(t))
		for _, sb := range sbs {
			t0 := time.Now()
			e.b.cli.mem = sb.mem
			if err := e.b.Stop(ctx, sb.id, runtime.StopOptions{Checkpoint: true}); err != nil {
				b.Fatal(err)
			}
			s.add(sb.mode+"-pause", time.Since(t0))
			t1 := time.Now()
			inst, err := e.b.Start(ctx, sb.id, runtime.StartOptions{})
			if err != nil {
				b.Fatal(err)
			}
			s.add(sb.mode+"-resume", time.Since(t1))
			wantAnswer(b, inst, "get", "held")
			s.add(sb.mode+"-first", time.Since(t1))
		}
	}
	s.report(b)
}

// BenchmarkFork measures, on runsc, a snapshot of a sandbox holding 100
// MiB and 10 sandboxes started from it one after another (as a fork does),
// each to its first answer, in each of restoreModes, interleaved as in
// BenchmarkResume. Each op is one snapshot and 10 forks per mode.
//
//	sudo go test -run '^$' -bench Fork -benchtime 3x ./internal/runtime/oci/
func BenchmarkFork(b *testing.B) {
	testutil.RequiresRoot(b)
	const mb, count = 100, 10
	baseline := baselineRun(b, Runc, testutil.RequiresRunc(b))
	fx := runtimetest.NewFixture(b)
	e := newEnv(b, Runsc, requiresStaticRunsc(b))
	sbs := modeSandboxes(b, e, fx, mb)
	ctx := b.Context()
	s := samples{}
	b.ResetTimer()
	for range b.N {
		t := time.Now()
		baseline()
		s.add("baseline", time.Since(t))
		for _, sb := range sbs {
			e.b.cli.mem = sb.mem
			t0 := time.Now()
			snap, err := e.b.Snapshot(ctx, sb.id, filepath.Join(b.TempDir(), "snap"))
			if err != nil {
				b.Fatal(err)
			}
			s.add(sb.mode+"-snapshot", time.Since(t0))
			t1 := time.Now()
			var ids []string
			for range count {
				spec := memorySpec(fx, runtimetest.NewID(), mb)
				spec.From = snap
				t := time.Now()
				inst, err := e.b.Create(ctx, spec)
				if err != nil {
					b.Fatal(err)
				}
				wantAnswer(b, inst, "get", "held")
				s.add(sb.mode+"-fork-first", time.Since(t))
				ids = append(ids, inst.ID)
			}
			s.add(sb.mode+"-forks", time.Since(t1))
			b.StopTimer()
			for _, id := range ids {
				if err := e.b.Destroy(ctx, id); err != nil {
					b.Fatal(err)
				}
			}
			if err := os.RemoveAll(filepath.Join(snap.Dir, snapshotMemory)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	s.report(b)
}
