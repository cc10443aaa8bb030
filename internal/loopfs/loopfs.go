// Package loopfs makes ext4 images and mounts them through loop devices
// set up in-process: sandboxes' limited disks (internal/runtime/oci) and
// volumes on one machine (internal/volume) both live on one, so a full
// image is ENOSPC to its writers and never a full host disk.
package loopfs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Format tells MakeImage what the image is for.
type Format int

const (
	// Scratch is a disk that dies with its sandbox: no journal, as a
	// crash loses it anyway, and mkfs takes milliseconds.
	Scratch Format = iota
	// Durable is data that outlives sandboxes and must survive a host
	// crash: with a journal (lazily initialised).
	Durable
)

// MakeImage writes a fresh sparse ext4 image of sizeMB at img; the file
// must not exist. A host whose disk is full is errdefs.ErrNoSpace.
func MakeImage(img string, sizeMB int, kind Format) error {
	f, err := os.OpenFile(img, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("creating disk image: %w", err)
	}
	err = f.Truncate(int64(sizeMB) << 20)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(img)
		return fmt.Errorf("sizing disk image: %w", err)
	}
	// No resize inode (images never grow), no reserved blocks (no root
	// daemon needs them), and lazy inode tables: mkfs writes a few blocks.
	features, ext := "^has_journal,^resize_inode", "lazy_itable_init=1,nodiscard"
	if kind == Durable {
		features, ext = "^resize_inode", "lazy_itable_init=1,lazy_journal_init=1,nodiscard"
	}
	out, err := exec.Command("mkfs.ext4", "-q", "-F", "-O", features, "-E", ext, "-m", "0", img).CombinedOutput()
	if err != nil {
		_ = os.Remove(img)
		if strings.Contains(string(out), "No space left") {
			return errdefs.New(errdefs.ErrNoSpace, "the host's disk is full")
		}
		return fmt.Errorf("making an ext4 image: %w: %s", err, strings.TrimSpace(string(out)))
	}
	return nil
}

// loopMu serialises this process's loop setups: between LOOP_CTL_GET_FREE
// and LOOP_CONFIGURE another one would get the same device.
var loopMu sync.Mutex

// Mount mounts the ext4 image img at mnt with the mount flags given,
// through a loop device set up in-process (no mount(8) fork):
// LOOP_CONFIGURE with autoclear, so the device goes away when the
// filesystem is unmounted.
func Mount(img, mnt string, flags uintptr) error {
	loopMu.Lock()
	defer loopMu.Unlock()
	f, err := os.OpenFile(img, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening disk image: %w", err)
	}
	defer f.Close()
	ctl, err := os.OpenFile("/dev/loop-control", os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("opening /dev/loop-control: %w", err)
	}
	defer ctl.Close()
	for range 16 { // another process may take the free device first
		n, err := unix.IoctlRetInt(int(ctl.Fd()), unix.LOOP_CTL_GET_FREE)
		if err != nil {
			return fmt.Errorf("finding a free loop device: %w", err)
		}
		dev := "/dev/loop" + strconv.Itoa(n)
		lf, err := configureLoop(dev, f)
		if errors.Is(err, unix.EBUSY) {
			time.Sleep(time.Millisecond) // another process's: let it finish
			continue
		}
		if err != nil {
			return err
		}
		// The device fd stays open until the mount holds the device:
		// autoclear would unbind it the moment the last user goes.
		err = unix.Mount(dev, mnt, "ext4", flags, "")
		lf.Close()
		if err != nil {
			return fmt.Errorf("mounting %s: %w", img, err)
		}
		return nil
	}
	return errors.New("setting up a loop device: every free device was taken meanwhile")
}

// configureLoop binds the image to the loop device, autoclear on, and
// returns the open device.
func configureLoop(dev string, img *os.File) (*os.File, error) {
	lf, err := os.OpenFile(dev, os.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", dev, err)
	}
	cfg := unix.LoopConfig{Fd: uint32(img.Fd())}
	cfg.Info.Flags = unix.LO_FLAGS_AUTOCLEAR
	if err := unix.IoctlLoopConfigure(int(lf.Fd()), &cfg); err != nil {
		lf.Close()
		return nil, fmt.Errorf("configuring %s: %w", dev, err)
	}
	return lf, nil
}
