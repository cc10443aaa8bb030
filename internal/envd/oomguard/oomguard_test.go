package oomguard

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// fakeProc writes a proc tree with meminfo and processes (pid → rss kB);
// pgids gives a process's group (default: none, as for envd's children
// in the test process's own group).
func fakeProc(t *testing.T, totalKB, availKB int, procs map[string]int, pgids map[string]int) string {
	t.Helper()
	root := t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(root, "meminfo"), "MemTotal:  "+strconv.Itoa(totalKB)+" kB\nMemFree: 1 kB\nMemAvailable: "+strconv.Itoa(availKB)+" kB\n")
	for pid, rss := range procs {
		write(filepath.Join(root, pid, "status"), "Name:\tp"+pid+"\nState:\tR\nVmRSS:\t  "+strconv.Itoa(rss)+" kB\n")
		write(filepath.Join(root, pid, "stat"), pid+" (p "+pid+") R 1 "+strconv.Itoa(pgids[pid])+" 0 0\n")
	}
	write(filepath.Join(root, "self", "status"), "Name:\tself\n")
	return root
}

func TestCheck(t *testing.T) {
	tests := []struct {
		name     string
		avail    int
		procs    map[string]int
		pgids    map[string]int
		wantKill int
	}{
		{"plenty available", 400 << 10, map[string]int{"1": 50000, "10": 300000}, nil, 0},
		{"low: the largest goes", 40 << 10, map[string]int{"1": 900000, "10": 300000, "11": 100000}, nil, 10},
		{"low, only envd", 40 << 10, map[string]int{"1": 900000}, nil, 0},
		// A fork bomb: many small processes in one group outweigh the
		// largest single process, and the whole group goes.
		{"fork bomb group", 40 << 10, map[string]int{"10": 200000, "20": 60000, "21": 60000, "22": 60000, "23": 60000},
			map[string]int{"10": 10, "20": 20, "21": 20, "22": 20, "23": 20}, -20},
		{"a lone hog in its group", 40 << 10, map[string]int{"10": 300000, "20": 60000},
			map[string]int{"10": 10, "20": 20}, -10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var killed int
			g := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
			g.Root = fakeProc(t, 512<<10, tc.avail, tc.procs, tc.pgids)
			g.Kill = func(pid int) error { killed = pid; return nil }
			did := g.Check()
			if killed != tc.wantKill || did != (tc.wantKill != 0) {
				t.Fatalf("killed %d (did %v), want %d", killed, did, tc.wantKill)
			}
		})
	}
}

// TestRunOnWake: until the first wake (the host's alerts armed) the guard
// polls; after it, the guard looks only when woken, and a busy sandbox is
// checked again only for the burst after the last wake.
func TestRunOnWake(t *testing.T) {
	var mu sync.Mutex
	var kills []int
	g := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	g.Interval, g.Burst = 5*time.Millisecond, 50*time.Millisecond
	g.Root = fakeProc(t, 512<<10, 40<<10, map[string]int{"10": 300000}, nil)
	g.Kill = func(pid int) error { mu.Lock(); kills = append(kills, pid); mu.Unlock(); return nil }
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(kills) }
	waitKills := func(n int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for count() < n && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
		}
		if count() < n {
			t.Fatalf("fewer than %d kills", n)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{}, 1)
	go g.RunOnWake(ctx, wake)
	waitKills(1) // polling before the alerts are armed
	wake <- struct{}{}
	// Memory stays low (the fake proc never changes): checks go on for the
	// burst after the wake, then stop until the next wake.
	time.Sleep(300 * time.Millisecond)
	settled := count()
	time.Sleep(200 * time.Millisecond)
	if n := count(); n != settled {
		t.Fatalf("still checking %v after the last wake: %d kills, then %d", 500*time.Millisecond, settled, n)
	}
	wake <- struct{}{}
	waitKills(settled + 1)
}

// TestNoSecondVictimWhileMemoryFrees: wakes that come right after a kill
// (the alerts the freeing raises) do not make the guard kill again before
// the kill had time to free memory.
func TestNoSecondVictimWhileMemoryFrees(t *testing.T) {
	var mu sync.Mutex
	var kills []time.Time
	g := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	g.Interval, g.Burst = 10*time.Millisecond, time.Second
	g.Root = fakeProc(t, 512<<10, 40<<10, map[string]int{"10": 300000}, nil)
	g.Kill = func(pid int) error { mu.Lock(); kills = append(kills, time.Now()); mu.Unlock(); return nil }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wake := make(chan struct{}, 1)
	wake <- struct{}{} // armed at once: no polling phase
	go g.RunOnWake(ctx, wake)
	stop := time.Now().Add(400 * time.Millisecond)
	for time.Now().Before(stop) {
		select {
		case wake <- struct{}{}:
		default:
		}
		time.Sleep(time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(kills) < 2 {
		t.Fatalf("%d kills in 400 ms with memory low throughout", len(kills))
	}
	for i := 1; i < len(kills); i++ {
		if gap := kills[i].Sub(kills[i-1]); gap < 10*g.Interval {
			t.Fatalf("kills %v apart: a second victim before the first one's memory could go", gap)
		}
	}
}

// TestCgroupMeter reads v1 and v2 memory cgroups as a runc sandbox sees
// its own at /sys/fs/cgroup: available is the limit's headroom plus the
// inactive file cache; no limit means nothing to guard.
func TestCgroupMeter(t *testing.T) {
	write := func(dir, name, data string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const mib = 1 << 20
	for _, tc := range []struct {
		name      string
		setup     func(root string)
		total, av uint64
		ok        bool
	}{
		{"v1", func(r string) {
			d := filepath.Join(r, "memory")
			write(d, "memory.limit_in_bytes", "1073741824\n")
			write(d, "memory.usage_in_bytes", "1069547520\n")
			write(d, "memory.stat", "cache 3424256\nrss 1056722944\ntotal_inactive_file 2097152\n")
		}, 1024 * mib, 6 * mib, true},
		{"v2", func(r string) {
			write(r, "memory.max", "536870912\n")
			write(r, "memory.current", "134217728\n")
			write(r, "memory.stat", "anon 100\ninactive_file 16777216\n")
		}, 512 * mib, 400 * mib, true},
		{"v1 unlimited", func(r string) {
			d := filepath.Join(r, "memory")
			write(d, "memory.limit_in_bytes", "9223372036854771712\n")
			write(d, "memory.usage_in_bytes", "1\n")
		}, 0, 0, false},
		{"v2 max", func(r string) {
			write(r, "memory.max", "max\n")
			write(r, "memory.current", "1\n")
		}, 0, 0, false},
		{"over the limit", func(r string) {
			write(r, "memory.max", "1048576\n")
			write(r, "memory.current", "2097152\n")
		}, mib, 0, true},
		{"no cgroup", func(string) {}, 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.setup(root)
			total, av, ok := CgroupMeter(root)()
			if total != tc.total || av != tc.av || ok != tc.ok {
				t.Errorf("got (%d, %d, %v), want (%d, %d, %v)", total, av, ok, tc.total, tc.av, tc.ok)
			}
		})
	}
}

// TestCgroupGuardKills: a cgroup guard whose cgroup is short of memory
// kills the largest process group, as the meminfo guard does.
func TestCgroupGuardKills(t *testing.T) {
	g := NewCgroup(slog.New(slog.NewTextHandler(io.Discard, nil)), t.TempDir())
	var killed []int
	g.Kill = func(pid int) error { killed = append(killed, pid); return nil }
	g.Meter = func() (uint64, uint64, bool) { return 1 << 30, 110 << 20, true }
	if g.Check() {
		t.Fatalf("killed with 110 MiB of 1 GiB available (reserve %d MiB)", g.Reserve(1<<30)>>20)
	}
	g.Meter = func() (uint64, uint64, bool) { return 1 << 30, 50 << 20, true }
	// meminfo says plenty is free: the cgroup's figures must decide.
	g.Root = fakeProc(t, 64<<20, 60<<20, map[string]int{"1": 5000, "10": 300000, "11": 100000}, nil)
	if !g.Check() || len(killed) != 1 || killed[0] != 10 {
		t.Fatalf("not killed with 50 MiB of 1 GiB available: %v", killed)
	}
}
