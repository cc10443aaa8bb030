package oci

import (
	"fmt"
	"slices"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// remount points a stopped sandbox's volume mounts at the host
// directories in mounts, which must have the targets it was created with:
// a memory image holds files open at those paths, and a volume moved on
// the host (a restart, another node) is the only change a start may see.
func remount(dir string, rec *record, mounts []runtime.Mount) error {
	if err := runtime.CheckMounts(mounts, nil); err != nil {
		return err
	}
	if !sameTargets(rec.Mounts, mounts) {
		return fmt.Errorf("volume mounts %v: the sandbox was created with %v: %w", targets(mounts), targets(rec.Mounts), errdefs.ErrInvalidArgument)
	}
	if slices.Equal(rec.Mounts, mounts) {
		return nil
	}
	source := make(map[string]string, len(mounts))
	for _, m := range mounts {
		source[m.Target] = m.Source
	}
	old := make(map[string]string, len(rec.Mounts))
	for _, m := range rec.Mounts {
		old[m.Target] = m.Source
	}
	err := editSpec(dir, func(s *specs.Spec) bool {
		for i, m := range s.Mounts {
			// The source tells a volume from runsc's /tmp bind at the same target.
			if src, ok := old[m.Destination]; ok && m.Type == "bind" && m.Source == src {
				s.Mounts[i].Source = source[m.Destination]
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	rec.Mounts = slices.Clone(mounts)
	return writeRecord(dir, rec)
}

func sameTargets(a, b []runtime.Mount) bool {
	x, y := targets(a), targets(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

func targets(mounts []runtime.Mount) []string {
	out := make([]string, len(mounts))
	for i, m := range mounts {
		out[i] = m.Target
	}
	return out
}
