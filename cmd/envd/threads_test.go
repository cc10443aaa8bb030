package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReserveThreads: after reserveThreads the process has that many OS
// threads, and keeps them once the goroutines are gone.
func TestReserveThreads(t *testing.T) {
	reserveThreads(24)
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			if n < 24 {
				t.Fatalf("%d threads after reserving 24", n)
			}
			return
		}
	}
	t.Fatal("no Threads: line in /proc/self/status")
}
