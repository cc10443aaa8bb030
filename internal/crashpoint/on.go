//go:build warren_crashpoints

package crashpoint

import (
	"fmt"
	"os"
	"syscall"
)

// Enabled reports whether this binary has crash points.
const Enabled = true

var target = os.Getenv(Env)

// Hit kills the process when name is the point WARREN_CRASH_AT names.
func Hit(name string) {
	if target == "" || name != target {
		return
	}
	fmt.Fprintf(os.Stderr, "crashpoint %s: killing the server\n", name)
	_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}
