package base

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

const markerName = ".complete"

// Marker is the JSON record written next to a complete rootfs. Its presence
// is what makes a cache entry valid.
type Marker struct {
	Recipe        string    `json:"recipe"`
	Suite         string    `json:"suite"`
	Arch          string    `json:"arch"`
	Mirror        string    `json:"mirror"`
	ConfigVersion int       `json:"config_version"`
	Packages      []string  `json:"packages"`  // what the recipe asked for
	Installed     []string  `json:"installed"` // name=version of every installed package
	SizeBytes     int64     `json:"size_bytes"`
	BuiltAt       time.Time `json:"built_at"`
	BuildSeconds  float64   `json:"build_seconds"`
}

// readMarker loads dir's marker and checks it is for recipe hash and that
// the rootfs beside it exists. A missing marker gives an fs.ErrNotExist error.
func readMarker(dir, hash string) (*Marker, error) {
	data, err := os.ReadFile(filepath.Join(dir, markerName))
	if err != nil {
		return nil, fmt.Errorf("reading build marker: %w", err)
	}
	var m Marker
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parsing build marker %s: %w", filepath.Join(dir, markerName), err)
	}
	if m.Recipe != hash {
		return nil, fmt.Errorf("build marker in %s is for recipe %q, want %q", dir, m.Recipe, hash)
	}
	if fi, err := os.Stat(filepath.Join(dir, "rootfs")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("rootfs of %s missing: %w", dir, errors.Join(err, fs.ErrNotExist))
	}
	return &m, nil
}

// writeMarker writes and fsyncs dir's marker; it is the last thing a build
// writes before the rename that publishes it.
func writeMarker(dir string, m *Marker) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding build marker: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, markerName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("writing build marker: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("writing build marker: %w", err)
	}
	return nil
}

// diskUsage is what `du -s -x` reports, in bytes: allocated blocks, each
// hard-linked inode counted once, not descending into other filesystems.
func diskUsage(root string) (int64, error) {
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

// installedPackages lists "name=version" for each package dpkg records as
// installed in the rootfs, in status-file order.
func installedPackages(rootfs string) ([]string, error) {
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
