package oci

import (
	"fmt"
	"os"
	"path/filepath"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// gVisor mounts a tmpfs of its own over an empty /tmp unless the spec
// mounts /tmp itself. That tmpfs hides what a template build wrote there
// (a build's RUN steps saw an empty /tmp and wrote into memory) and loses
// what the sandbox writes there at every reboot, where E2B's VM and
// Docker keep /tmp on the disk. So on runsc /tmp is bound to the rootfs's
// own /tmp directory: the same overlay, so the same disk and quota.

// tmpMount is the /tmp bind for a runsc bundle whose rootfs is rootfs.
func tmpMount(rootfs string) specs.Mount {
	return specs.Mount{
		Destination: "/tmp",
		Type:        "bind",
		Source:      filepath.Join(rootfs, "tmp"),
		Options:     []string{"rbind", "rw", "nosuid", "nodev"},
	}
}

// prepareTmp makes sure the rootfs's /tmp is a plain directory that can
// be bound, creating it (mode 1777) when the template has none. It
// reports false when it is anything else: a symlink there would be
// followed on the host when the runtime binds it.
func prepareTmp(rootfs string) (bool, error) {
	p := filepath.Join(rootfs, "tmp")
	fi, err := os.Lstat(p)
	if os.IsNotExist(err) {
		if err := os.Mkdir(p, 0o700); err != nil {
			return false, fmt.Errorf("creating /tmp: %w", err)
		}
		return true, os.Chmod(p, 0o777|os.ModeSticky)
	}
	if err != nil {
		return false, fmt.Errorf("inspecting /tmp: %w", err)
	}
	return fi.Mode().IsDir(), nil
}

// guardTmpBind runs before every start and restore of a runsc bundle in
// dir: the sandbox may have replaced its /tmp while it had no bind over
// it, so a /tmp that is no longer a plain directory loses the bind (the
// sandbox then sees its own /tmp, whatever it made of it) instead of the
// runtime following it on the host.
func guardTmpBind(dir string) error {
	return editSpec(dir, func(s *specs.Spec) bool {
		for i, m := range s.Mounts {
			if m.Destination != "/tmp" || m.Type != "bind" {
				continue
			}
			if fi, err := os.Lstat(m.Source); err == nil && fi.Mode().IsDir() {
				return false
			}
			s.Mounts = append(s.Mounts[:i], s.Mounts[i+1:]...)
			return true
		}
		return false
	})
}
