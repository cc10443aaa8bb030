package apiserver

import (
	"fmt"
	"path"
	"strings"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/store"
)

// maxVolumeMounts bounds a create's volumeMounts (the volume service
// holds the same bound).
const maxVolumeMounts = 16

// volumeMounts checks a create's volumeMounts for their shape: a volume's
// name and an absolute, clean path, each path once. Which volumes the
// team has, and which paths a sandbox may not mount over, the manager
// checks (volume.Service.Resolve).
func volumeMounts(in *[]rest.SandboxVolumeMount) ([]store.VolumeMount, error) {
	if in == nil || len(*in) == 0 {
		return nil, nil
	}
	if len(*in) > maxVolumeMounts {
		return nil, invalid(fmt.Sprintf("volumeMounts has %d entries; at most %d are allowed", len(*in), maxVolumeMounts))
	}
	out := make([]store.VolumeMount, 0, len(*in))
	seen := map[string]bool{}
	for _, m := range *in {
		if !volumeName.MatchString(m.Name) {
			return nil, invalid(fmt.Sprintf("volumeMounts: %q is not a volume name (1 to 63 letters, digits, '_' or '-')", m.Name))
		}
		if err := checkMountPath(m.Path); err != nil {
			return nil, err
		}
		if seen[m.Path] {
			return nil, invalid(fmt.Sprintf("volumeMounts: two volumes at %s", m.Path))
		}
		seen[m.Path] = true
		out = append(out, store.VolumeMount{Name: m.Name, Path: m.Path})
	}
	return out, nil
}

func checkMountPath(p string) error {
	switch {
	case len(p) > 4096 || strings.ContainsRune(p, 0):
		return invalid("volumeMounts: a path is longer than 4096 bytes or holds a NUL")
	case !path.IsAbs(p) || path.Clean(p) != p:
		return invalid(fmt.Sprintf("volumeMounts: path %q must be absolute and clean (no '..', '.', '//' or trailing '/')", p))
	case p == "/":
		return invalid("volumeMounts: a volume cannot be mounted over the sandbox's root")
	}
	return nil
}

// mountsResponse is a sandbox's volumeMounts as E2B shows them.
func mountsResponse(ms []store.VolumeMount) *[]rest.SandboxVolumeMount {
	out := make([]rest.SandboxVolumeMount, 0, len(ms))
	for _, m := range ms {
		out = append(out, rest.SandboxVolumeMount{Name: m.Name, Path: m.Path})
	}
	return &out
}
