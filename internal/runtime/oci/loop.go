package oci

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// loopMu serialises this process's loop setups: between LOOP_CTL_GET_FREE
// and LOOP_CONFIGURE another one would get the same device.
var loopMu sync.Mutex

// mountLoop mounts the ext4 image img at mnt through a loop device set up
// in-process (no mount(8) fork): LOOP_CONFIGURE with autoclear, so the
// device goes away when the filesystem is unmounted.
func mountLoop(img, mnt string) error {
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
		err = unix.Mount(dev, mnt, "ext4", unix.MS_NODEV|unix.MS_NOATIME, "")
		lf.Close()
		if err != nil {
			return fmt.Errorf("mounting the sandbox's disk: %w", err)
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
