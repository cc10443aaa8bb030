package reaper

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper marks the calling process as a child subreaper, so that
// orphaned descendants are re-parented to it (and reaped by a reap-all
// Reaper) even when it is not PID 1.
func BecomeSubreaper() error {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("setting child subreaper: %w", err)
	}
	return nil
}
