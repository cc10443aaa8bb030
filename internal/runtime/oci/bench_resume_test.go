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
// one run: eager (the whole image read before the restore returns, zero
// pages kept), background without leaving zero pages out, and what warren
// does.
var restoreModes = []struct {
	name string
	tune func(*env)
}{
	{"eager", func(e *env) { e.b.cli.mem = memoryFlags{} }},
	{"background-zeropages", func(e *env) {
		e.b.cli.mem.checkpoint = slices.DeleteFunc(e.b.cli.mem.checkpoint, func(f string) bool { return f == "--exclude-committed-zero-pages" })
	}},
	{"background", func(*env) {}},
}

// BenchmarkResume measures, on runsc, a pause that saves the memory (Stop
// with a checkpoint) and a resume (Start, then the first answer of the
// sandbox's testinit) of a sandbox holding 100 MiB and 1 GiB in each of
// restoreModes, next to `runc run` of a static binary
// that exits at once (the baseline of docs/benchmarks.md).
//
//	sudo go test -run '^$' -bench Resume -benchtime 5x ./internal/runtime/oci/
func BenchmarkResume(b *testing.B) {
	testutil.RequiresRoot(b)
	b.Run("baseline/runc", func(b *testing.B) { benchBaseline(b, Runc, testutil.RequiresRunc(b)) })
	for _, mode := range restoreModes {
		for _, mb := range []int{100, 1024} {
			b.Run(fmt.Sprintf("%s/%dMiB", mode.name, mb), func(b *testing.B) { benchResume(b, mode.tune, mb) })
		}
	}
}

func benchResume(b *testing.B, tune func(*env), mb int) {
	e := newEnv(b, Runsc, requiresStaticRunsc(b))
	tune(e)
	fx := runtimetest.NewFixture(b)
	ctx := b.Context()
	id := runtimetest.NewID()
	holdMemory(b, e, fx, id, mb)
	var pause, resume, first time.Duration
	var image int64
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if err := e.b.Stop(ctx, id, runtime.StopOptions{Checkpoint: true}); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		image += dirSize(filepath.Join(e.b.dir(id), imageDir))
		t2 := time.Now()
		inst, err := e.b.Start(ctx, id, runtime.StartOptions{})
		if err != nil {
			b.Fatal(err)
		}
		t3 := time.Now()
		wantAnswer(b, inst, "get", "held")
		pause, resume, first = pause+t1.Sub(t0), resume+t3.Sub(t2), first+time.Since(t2)
	}
	n := float64(b.N)
	b.ReportMetric(float64(pause.Milliseconds())/n, "pause-ms")
	b.ReportMetric(float64(resume.Milliseconds())/n, "resume-ms")
	b.ReportMetric(float64(first.Milliseconds())/n, "to-first-answer-ms")
	b.ReportMetric(float64(image>>20)/n, "image-MiB")
}

// BenchmarkFork measures, on runsc, a snapshot of a sandbox holding 100
// MiB or 1 GiB and 10 sandboxes started from it one after another (as a
// fork does), each to its first answer, in each of restoreModes. Each op
// is one snapshot and 10 forks.
//
//	sudo go test -run '^$' -bench Fork -benchtime 1x ./internal/runtime/oci/
func BenchmarkFork(b *testing.B) {
	testutil.RequiresRoot(b)
	for _, mode := range restoreModes {
		for _, mb := range []int{100, 1024} {
			b.Run(fmt.Sprintf("%s/%dMiB", mode.name, mb), func(b *testing.B) { benchFork(b, mode.tune, mb, 10) })
		}
	}
}

func benchFork(b *testing.B, tune func(*env), mb, count int) {
	e := newEnv(b, Runsc, requiresStaticRunsc(b))
	tune(e)
	fx := runtimetest.NewFixture(b)
	ctx := b.Context()
	id := runtimetest.NewID()
	holdMemory(b, e, fx, id, mb)
	var snapshot, forks, first time.Duration
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		snap, err := e.b.Snapshot(ctx, id, filepath.Join(b.TempDir(), "snap"))
		if err != nil {
			b.Fatal(err)
		}
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
			first += time.Since(t)
			ids = append(ids, inst.ID)
		}
		snapshot, forks = snapshot+t1.Sub(t0), forks+time.Since(t1)
		b.StopTimer()
		for _, fid := range ids {
			if err := e.b.Destroy(ctx, fid); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(snapshot.Milliseconds())/n, "snapshot-ms")
	b.ReportMetric(float64(forks.Milliseconds())/n, "forks-ms")
	b.ReportMetric(float64(first.Milliseconds())/n/float64(count), "fork-to-first-answer-ms")
}

// dirSize is the total size of the files directly in dir.
func dirSize(dir string) int64 {
	entries, _ := os.ReadDir(dir)
	var n int64
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}
