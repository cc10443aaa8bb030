package snapshot

import (
	"runtime"
	"testing"
)

// TestForkWorkers: forks start at most one per CPU, never more than asked
// for, fewer when the host has not the memory for them, and never none.
func TestForkWorkers(t *testing.T) {
	avail, ok := memAvailableMB()
	if !ok || avail < 4 {
		t.Skip("no MemAvailable in /proc/meminfo")
	}
	cpus := runtime.NumCPU()
	for _, tc := range []struct {
		name            string
		count, memoryMB int
		want            int
	}{
		{"one fork", 1, 1, 1},
		{"many small forks: one per CPU", 100, 1, min(100, cpus, avail/2)},
		{"unknown memory", 100, 0, cpus},
		{"memory for one at a time", 10, avail / 2, 1},
		{"memory for none: still one", 10, avail * 4, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := forkWorkers(tc.count, tc.memoryMB); got != tc.want {
				t.Errorf("forkWorkers(%d, %d) = %d; want %d", tc.count, tc.memoryMB, got, tc.want)
			}
		})
	}
}
