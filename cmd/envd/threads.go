package main

import (
	"runtime"
	"sync"
)

// reserveThreads exists for sandboxes whose pids limit counts envd's
// threads (runc): a fork bomb inside takes every pid left, and the Go
// runtime, needing one more thread for a blocking syscall, then aborts
// ("failed to create new OS thread"), and the sandbox dies with its init.
// Threads made beforehand stay in the runtime's idle list (Go never ends
// an idle thread), so envd keeps answering through the bomb. Under gVisor
// the host's pids limit counts the Sentry's threads, not the sandbox's
// tasks, and RLIMIT_NPROC stops the bomb, so warren does not ask for it.
//
// It makes the runtime own at least n OS threads: n goroutines each lock
// a thread and wait until all n hold one, then let go.
func reserveThreads(n int) {
	var ready, done sync.WaitGroup
	release := make(chan struct{})
	ready.Add(n)
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			ready.Done()
			<-release
			runtime.UnlockOSThread()
		}()
	}
	ready.Wait()
	close(release)
	done.Wait()
}
