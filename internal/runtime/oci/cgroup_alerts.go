package oci

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// MemoryAlerts implements runtime.Backend.MemoryAlerts for both runtimes on
// cgroup v1 hosts. The kernel signals an eventfd when the cgroup's memory
// usage crosses any of a ladder of thresholds (cgroup.event_control on
// memory.usage_in_bytes); nothing polls, and a sandbox whose memory does
// not move is never woken.
func (b *Backend) MemoryAlerts(ctx context.Context, id string) (<-chan struct{}, error) {
	if !b.Capabilities().MemoryAlerts {
		return nil, fmt.Errorf("memory alerts: %w", errdefs.ErrNotImplemented)
	}
	rec, err := b.record(id)
	if err != nil {
		return nil, err
	}
	dir := b.cg.controllerDir("memory", b.cgroupPath(id))
	limit, err := readUint(dir, "memory.limit_in_bytes")
	if err != nil {
		return nil, fmt.Errorf("memory alerts of sandbox %s: %w", id, err)
	}
	return memoryAlerts(ctx, dir, alertThresholds(uint64(rec.MemoryMB)<<20, limit))
}

// alertThresholds is the ladder for a sandbox whose applications see mem
// bytes, in a cgroup limited to limit (mem plus the Sentry's headroom):
// from half of mem, where the OOM guard starts to care, up to the limit,
// a rung every sixteenth of mem (at least 16 MiB). Memory that grows
// crosses a rung every few milliseconds even when it grows fast, and each
// crossing has envd look.
func alertThresholds(mem, limit uint64) []uint64 {
	if mem == 0 || limit <= mem/2 {
		return nil
	}
	step := max(mem/16, 16<<20)
	var out []uint64
	for t := mem / 2; t < limit; t += step {
		out = append(out, t)
	}
	return out
}

// memoryAlerts registers one eventfd at each threshold of dir's memory
// usage and returns a channel that receives (coalesced) on every crossing,
// in either direction, and once when the ladder is armed. It is closed
// when ctx ends or the cgroup goes (the kernel signals the eventfd then
// too).
//
// The kernel waits for an RCU grace period on every registration (about
// 10 ms each here), so the ladder is registered in the background, top
// rungs first: the create that asked does not wait for it, and the rungs
// near the limit, which matter most, are armed first.
func memoryAlerts(ctx context.Context, dir string, thresholds []uint64) (<-chan struct{}, error) {
	if len(thresholds) == 0 {
		return nil, fmt.Errorf("memory alerts: no memory limit: %w", errdefs.ErrFailedPrecondition)
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("memory alerts: eventfd: %w", err)
	}
	// A non-blocking fd goes to Go's poller: no thread waits per sandbox.
	ev := os.NewFile(uintptr(efd), "memory-alerts")
	ch := make(chan struct{}, 1)
	stop := context.AfterFunc(ctx, func() { ev.Close() })
	go func() {
		defer close(ch)
		defer stop()
		defer ev.Close()
		top := slices.Clone(thresholds)
		slices.Reverse(top)
		if err := register(dir, efd, top); err != nil {
			// ENODEV: the cgroup is being removed (a sandbox killed
			// while its ladder was being armed).
			if _, serr := os.Stat(dir); serr == nil && !errors.Is(err, unix.ENODEV) {
				log.G(ctx).Warn("memory alerts", "cgroup", dir, "err", err)
			}
			return
		}
		// Armed: the first alert says so, and the guard stops polling.
		ch <- struct{}{}
		buf := make([]byte, 8)
		for {
			if _, err := ev.Read(buf); err != nil {
				return
			}
			if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
				return // removed: the kernel's last signal
			}
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}()
	return ch, nil
}

// register writes "<eventfd> <usage fd> <threshold>" to cgroup.event_control
// once per threshold. The kernel keeps its own references, so both files
// close afterwards.
func register(dir string, efd int, thresholds []uint64) error {
	usage, err := os.Open(filepath.Join(dir, "memory.usage_in_bytes"))
	if err != nil {
		return fmt.Errorf("memory alerts: %w", err)
	}
	defer usage.Close()
	ctl, err := os.OpenFile(filepath.Join(dir, "cgroup.event_control"), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("memory alerts: %w", err)
	}
	defer ctl.Close()
	prefix := strconv.Itoa(efd) + " " + strconv.Itoa(int(usage.Fd())) + " "
	for _, t := range thresholds {
		if _, err := ctl.WriteString(prefix + strconv.FormatUint(t, 10)); err != nil {
			return fmt.Errorf("memory alerts: registering %d: %w", t, err)
		}
	}
	return nil
}
