package main

import (
	"runtime"
	"sync"
)

// threadReserve is how many OS threads envd makes at start and keeps.
// A sandbox's pids limit counts threads, and a fork bomb inside takes every
// pid left: the Go runtime, needing one more thread for a blocking
// syscall, then aborts ("failed to create new OS thread") and the sandbox
// dies with its init. Threads made beforehand stay in the runtime's idle
// list (Go never ends an idle thread), so envd keeps answering through the
// bomb. Each costs a parked kernel task and a few KiB.
const threadReserve = 32

// reserveThreads makes the runtime own at least n OS threads: n goroutines
// each lock a thread and wait until all n hold one, then let go.
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
