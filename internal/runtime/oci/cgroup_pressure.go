package oci

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// CPUPressure reports how much this backend's sandboxes waited for a CPU
// over the last 10 s: PSI's "some avg10" (%) of the cgroup parent they all
// live under, read from the unified hierarchy (on a v1 host, the cgroup2
// mount beside it, which runc joins in hybrid mode too). Unrelated
// processes on the host do not count, unlike /proc/pressure/cpu. It fails
// with ErrNotImplemented where the kernel keeps no such figure for the
// sandboxes.
func (b *Backend) CPUPressure() (float64, error) {
	if b.cg == nil || b.cg.unified == "" {
		return 0, fmt.Errorf("no cgroup2 hierarchy to read the sandboxes' CPU pressure from: %w", errdefs.ErrNotImplemented)
	}
	path := filepath.Join(b.cg.unified, b.opts.CgroupParent, "cpu.pressure")
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		// No sandbox has run yet, or none of them joined this hierarchy.
		return 0, fmt.Errorf("reading %s: %w", path, errdefs.ErrNotImplemented)
	}
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return someAvg10(string(data))
}

// someAvg10 reads the avg10 of a PSI file's "some" line.
func someAvg10(psi string) (float64, error) {
	for _, line := range strings.Split(psi, "\n") {
		rest, ok := strings.CutPrefix(line, "some ")
		if !ok {
			continue
		}
		for _, f := range strings.Fields(rest) {
			if v, ok := strings.CutPrefix(f, "avg10="); ok {
				return strconv.ParseFloat(v, 64)
			}
		}
	}
	return 0, fmt.Errorf("no 'some avg10' in %q", psi)
}
