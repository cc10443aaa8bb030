package oci

import (
	"errors"
	"fmt"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// writeIdentity writes /etc/hostname and /etc/hosts into the merged rootfs.
// The template is untrusted: its /etc or those files may be symlinks
// pointing anywhere, so every lookup is confined to the rootfs with
// openat2(RESOLVE_IN_ROOT) and the files are replaced, never written through.
func writeIdentity(rootfs, hostname string, dns netip.Addr) error {
	hosts := "127.0.0.1\tlocalhost\n" +
		"::1\tlocalhost ip6-localhost ip6-loopback\n" +
		"127.0.1.1\t" + hostname + "\n"
	etc, err := openEtc(rootfs)
	if err != nil {
		return err
	}
	defer unix.Close(etc)
	if err := replaceFile(etc, "hostname", hostname+"\n"); err != nil {
		return err
	}
	if dns.IsValid() {
		// warren's DNS relay on the gateway; no other resolver is reachable.
		if err := replaceFile(etc, "resolv.conf", "nameserver "+dns.String()+"\n"); err != nil {
			return err
		}
	}
	return replaceFile(etc, "hosts", hosts)
}

// openEtc opens (creating it if missing) the rootfs's /etc as a directory fd.
func openEtc(rootfs string) (int, error) {
	root, err := unix.Open(rootfs, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("opening rootfs: %w", err)
	}
	defer unix.Close(root)
	how := &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	}
	fd, err := unix.Openat2(root, "etc", how)
	if errors.Is(err, unix.ENOENT) {
		if err := unix.Mkdirat(root, "etc", 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			return -1, fmt.Errorf("creating /etc: %w", err)
		}
		fd, err = unix.Openat2(root, "etc", how)
	}
	if err != nil {
		return -1, fmt.Errorf("opening /etc in rootfs: %w", err)
	}
	return fd, nil
}

// replaceFile unlinks name in dir (a symlink is removed, not followed) and
// creates it afresh, refusing to follow anything.
func replaceFile(dir int, name, content string) error {
	if err := unix.Unlinkat(dir, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("replacing /etc/%s: %w", name, err)
	}
	fd, err := unix.Openat(dir, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return fmt.Errorf("creating /etc/%s: %w", name, err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	if _, err := f.WriteString(content); err != nil {
		return fmt.Errorf("writing /etc/%s: %w", name, err)
	}
	return nil
}
