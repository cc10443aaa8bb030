package e2e

import (
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/moby/sys/mountinfo"
)

// detachMountsUnder lazily unmounts every mount point at or under dir and
// returns them. The server should have left none; detaching them keeps the
// removal of a temporary data dir from reaching into a mounted filesystem.
func detachMountsUnder(t testing.TB, dir string) []string {
	t.Helper()
	mounts, err := mountPointsUnder(dir)
	if err != nil {
		t.Logf("reading mounts: %v", err)
		return nil
	}
	// Deepest first, so that nested mounts go before their parents.
	sort.Slice(mounts, func(i, j int) bool { return len(mounts[i]) > len(mounts[j]) })
	for _, m := range mounts {
		if err := syscall.Unmount(m, syscall.MNT_DETACH); err != nil {
			t.Logf("detaching %s: %v", m, err)
		}
	}
	return mounts
}

func mountPointsUnder(dir string) ([]string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	if err != nil {
		return nil, err
	}
	out := make([]string, len(mounts))
	for i, m := range mounts {
		out[i] = m.Mountpoint
	}
	return out, nil
}
