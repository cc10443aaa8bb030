package main

import (
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// markInheritedCloexec makes every descriptor above stderr close-on-exec.
// Go opens its own files that way, but descriptors inherited from whatever
// started envd are not, and user processes must not inherit them.
func markInheritedCloexec() {
	if unix.CloseRange(3, math.MaxUint32, unix.CLOSE_RANGE_CLOEXEC) == nil {
		return
	}
	// Kernels before 5.11 (and some sandboxes) lack close_range.
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}
