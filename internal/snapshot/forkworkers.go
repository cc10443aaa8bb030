package snapshot

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// forkWorkers is how many forks of count, each allowed memoryMB, start at
// once. One restore after another left the CPUs idle while each waited on
// its runtime's start-up; more at once than there are CPUs only makes each
// slower. Each start still takes its turn in the manager's start queue,
// whose host-memory check counts only memory already in use: a restore
// returns while its pages are still loading, so the forks in flight are
// also bounded by what the host has available now, at twice the fork's
// memory limit each as a margin.
func forkWorkers(count, memoryMB int) int {
	n := min(count, runtime.NumCPU())
	if avail, ok := memAvailableMB(); ok && memoryMB > 0 {
		n = min(n, avail/(2*memoryMB))
	}
	return max(n, 1)
}

// memAvailableMB reads MemAvailable from /proc/meminfo, in MB.
func memAvailableMB() (int, bool) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.Atoi(fields[1])
			return kb / 1024, err == nil
		}
	}
	return 0, false
}
