package apiserver

import (
	"fmt"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/volume"
)

// volumeMounts checks a create's volumeMounts for their shape, by the
// volume package's rules (a volume's name, a path a volume may cover),
// each path once. Which volumes the team has, the manager resolves
// (volume.Service.Resolve).
func volumeMounts(in *[]rest.SandboxVolumeMount) ([]store.VolumeMount, error) {
	if in == nil || len(*in) == 0 {
		return nil, nil
	}
	if len(*in) > volume.MaxMounts {
		return nil, invalid(fmt.Sprintf("volumeMounts has %d entries; at most %d are allowed", len(*in), volume.MaxMounts))
	}
	out := make([]store.VolumeMount, 0, len(*in))
	seen := map[string]bool{}
	for _, m := range *in {
		if !volume.ValidName(m.Name) {
			return nil, invalid(fmt.Sprintf("volumeMounts: %q is not a volume name (1 to 63 letters, digits, '_' or '-')", m.Name))
		}
		if err := volume.CheckMountPath(m.Path); err != nil {
			return nil, fmt.Errorf("volumeMounts: %w", err)
		}
		if seen[m.Path] {
			return nil, invalid(fmt.Sprintf("volumeMounts: two volumes at %s", m.Path))
		}
		seen[m.Path] = true
		out = append(out, store.VolumeMount{Name: m.Name, Path: m.Path})
	}
	return out, nil
}

// mountsResponse is a sandbox's volumeMounts as E2B shows them.
func mountsResponse(ms []store.VolumeMount) *[]rest.SandboxVolumeMount {
	out := make([]rest.SandboxVolumeMount, 0, len(ms))
	for _, m := range ms {
		out = append(out, rest.SandboxVolumeMount{Name: m.Name, Path: m.Path})
	}
	return &out
}
