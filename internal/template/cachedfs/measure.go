package cachedfs

import (
	"bufio"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// DiskUsage is what `du -s -x` reports, in bytes: allocated blocks, each
// hard-linked inode counted once, not descending into other filesystems.
func DiskUsage(root string) (int64, error) {
	rootInfo, err := os.Lstat(root)
	if err != nil {
		return 0, fmt.Errorf("measuring %s: %w", root, err)
	}
	rootDev := rootInfo.Sys().(*syscall.Stat_t).Dev
	type inode struct{ dev, ino uint64 }
	seen := make(map[inode]bool)
	var total int64
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st := info.Sys().(*syscall.Stat_t)
		if st.Dev != rootDev {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if st.Nlink > 1 && !d.IsDir() {
			key := inode{uint64(st.Dev), st.Ino}
			if seen[key] {
				return nil
			}
			seen[key] = true
		}
		total += st.Blocks * 512
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("measuring %s: %w", root, err)
	}
	return total, nil
}

// InstalledPackages lists "name=version" for each package dpkg records as
// installed in the rootfs, in status-file order.
func InstalledPackages(rootfs string) ([]string, error) {
	f, err := os.Open(filepath.Join(rootfs, "var/lib/dpkg/status"))
	if err != nil {
		return nil, fmt.Errorf("reading dpkg status: %w", err)
	}
	defer f.Close()
	var out []string
	var name, version, status string
	flush := func() {
		if name != "" && status == "install ok installed" {
			out = append(out, name+"="+version)
		}
		name, version, status = "", "", ""
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			flush()
			continue
		}
		k, v, ok := strings.Cut(line, ": ")
		switch {
		case !ok:
		case k == "Package":
			name = v
		case k == "Version":
			version = v
		case k == "Status":
			status = v
		}
	}
	flush()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading dpkg status: %w", err)
	}
	return out, nil
}

func HumanBytes(n int64) string {
	const mib = 1 << 20
	return fmt.Sprintf("%.0f MiB", float64(n)/mib)
}
