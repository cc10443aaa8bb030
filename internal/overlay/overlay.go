// Package overlay mounts overlayfs stacks of many read-only layers.
//
// The kernel takes all of a mount's options in one page, so a stack named
// by absolute paths (/var/lib/warren/layers/<20 chars>, 45 bytes each)
// tops out near 60 layers. Mount names each layer by an O_PATH descriptor
// of this process instead (/proc/self/fd/N, at most 20 bytes), which the
// kernel resolves while mounting; the descriptors are closed afterwards.
// That lifts the cap to MaxLayers, above Docker's own 125 (overlayfs
// itself stops at 500).
package overlay

import (
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// MaxLayers is the most lower layers Mount accepts.
const MaxLayers = 160

// optionsLimit is the kernel's limit on one mount's option string (a page,
// terminating NUL included).
const optionsLimit = 4095

// ErrTooManyLayers is returned (wrapped) for stacks past MaxLayers.
var ErrTooManyLayers = errors.New("too many layers for one overlay mount")

// Check refuses stacks of more than MaxLayers layers.
func Check(layers int) error {
	if layers > MaxLayers {
		return fmt.Errorf("%d layers, at most %d: %w", layers, MaxLayers, ErrTooManyLayers)
	}
	return nil
}

// Mount mounts at target an overlay of lowers (top first) with upper and
// work as its writable dirs, or read-only when upper is "". extra are more
// options ("index=off"); flags are mount(2) flags.
func Mount(target string, lowers []string, upper, work string, extra []string, flags uintptr) error {
	if len(lowers) == 0 {
		return errors.New("overlay mount: no layers")
	}
	if err := Check(len(lowers)); err != nil {
		return err
	}
	fds := make([]int, 0, len(lowers))
	defer func() {
		for _, fd := range fds {
			_ = unix.Close(fd)
		}
	}()
	names := make([]string, 0, len(lowers))
	for _, l := range lowers {
		fd, err := unix.Open(l, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("overlay mount: opening layer %s: %w", l, err)
		}
		fds = append(fds, fd)
		names = append(names, fmt.Sprintf("/proc/self/fd/%d", fd))
	}
	opts := []string{"lowerdir=" + strings.Join(names, ":")}
	if upper != "" {
		for _, p := range []string{upper, work} {
			if strings.ContainsAny(p, ":,") {
				return fmt.Errorf("overlay mount: path %q has a ':' or ','", p)
			}
		}
		opts = append(opts, "upperdir="+upper, "workdir="+work)
	}
	data := strings.Join(append(opts, extra...), ",")
	if len(data) > optionsLimit {
		return fmt.Errorf("overlay mount: options are %d bytes, the kernel takes %d: %w", len(data), optionsLimit, ErrTooManyLayers)
	}
	if err := unix.Mount("overlay", target, "overlay", flags, data); err != nil {
		return fmt.Errorf("overlay mount at %s (%d layers): %w", target, len(lowers), err)
	}
	return nil
}
