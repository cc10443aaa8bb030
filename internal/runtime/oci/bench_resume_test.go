package oci

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// restoreModes are the two ways runsc restores, compared in one run.
var restoreModes = []struct {
	name  string
	eager bool
}{{"eager", true}, {"background", false}}

// BenchmarkResume measures, on runsc, a pause that saves the memory (Stop
// with a checkpoint) and a resume (Start, then the first answer of the
// sandbox's testinit) of a sandbox holding 100 MiB and 1 GiB, with eager
// and with background restores, next to `runc run` of a static binary
// that exits at once (the baseline of docs/benchmarks.md).
//
//	sudo go test -run '^$' -bench Resume -benchtime 5x ./internal/runtime/oci/
func BenchmarkResume(b *testing.B) {
	testutil.RequiresRoot(b)
	b.Run("baseline/runc", func(b *testing.B) { benchBaseline(b, Runc, testutil.RequiresRunc(b)) })
	for _, mode := range restoreModes {
		for _, mb := range []int{100, 1024} {
			b.Run(fmt.Sprintf("%s/%dMiB", mode.name, mb), func(b *testing.B) { benchResume(b, mode.eager, mb) })
		}
	}
}

func benchResume(b *testing.B, eager bool, mb int) {
	e := newEnv(b, Runsc, requiresStaticRunsc(b), func(o *Options) { o.EagerRestore = eager })
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
// fork does), each to its first answer, with eager and background
// restores. Each op is one snapshot and 10 forks.
//
//	sudo go test -run '^$' -bench Fork -benchtime 1x ./internal/runtime/oci/
func BenchmarkFork(b *testing.B) {
	testutil.RequiresRoot(b)
	for _, mode := range restoreModes {
		for _, mb := range []int{100, 1024} {
			b.Run(fmt.Sprintf("%s/%dMiB", mode.name, mb), func(b *testing.B) { benchFork(b, mode.eager, mb, 10) })
		}
	}
}

func benchFork(b *testing.B, eager bool, mb, count int) {
	e := newEnv(b, Runsc, requiresStaticRunsc(b), func(o *Options) { o.EagerRestore = eager })
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
