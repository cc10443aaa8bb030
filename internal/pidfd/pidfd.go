// Package pidfd waits for processes to exit through pidfds in Go's poller,
// so that hundreds of watched processes park goroutines, not threads
// blocked in poll(2).
package pidfd

import (
	"os"

	"golang.org/x/sys/unix"
)

// Open returns a non-blocking pidfd for pid.
func Open(pid int) (int, error) { return unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK) }

// Wait blocks until the pidfd reports its process gone, and closes it.
func Wait(fd int) {
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err == nil {
		err = rc.Read(func(uintptr) bool { return Exited(fd) })
	}
	if err == nil {
		return
	}
	// Not pollable after all: wait in a thread of its own.
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		if _, err := unix.Poll(fds, -1); err != unix.EINTR {
			return
		}
	}
}

// Exited reports whether the pidfd is readable: its process is gone.
func Exited(fd int) bool {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	return err == nil && n > 0
}
