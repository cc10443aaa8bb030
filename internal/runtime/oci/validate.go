package oci

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// idRE is the contract's sandbox id alphabet; the length bound keeps ids
// usable in file and netns names.
var idRE = regexp.MustCompile(`^[a-z0-9]{1,64}$`)

func validID(id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("sandbox id %q: want 1-64 of [a-z0-9]: %w", id, errdefs.ErrInvalidArgument)
	}
	return nil
}

// normalize validates spec and fills in defaults: hostname = id, resource
// defaults. Everything checked here fails before any side effect.
func (b *Backend) normalize(spec runtime.Spec) (runtime.Spec, error) {
	if err := validID(spec.ID); err != nil {
		return spec, err
	}
	if err := checkDir(spec.Rootfs, "rootfs"); err != nil {
		return spec, err
	}
	// The overlay mount option string separates with ',' and ':'.
	if strings.ContainsAny(spec.Rootfs, ",:") {
		return spec, fmt.Errorf("rootfs path %q contains ',' or ':': %w", spec.Rootfs, errdefs.ErrInvalidArgument)
	}
	if len(spec.Init.Args) == 0 || spec.Init.Args[0] == "" {
		return spec, fmt.Errorf("init process has no command: %w", errdefs.ErrInvalidArgument)
	}
	for _, bind := range spec.Binds {
		if !filepath.IsAbs(bind.Source) || !filepath.IsAbs(bind.Target) {
			return spec, fmt.Errorf("bind %s -> %s: paths must be absolute: %w", bind.Source, bind.Target, errdefs.ErrInvalidArgument)
		}
		if _, err := os.Stat(bind.Source); err != nil {
			return spec, fmt.Errorf("bind source %s: %w: %w", bind.Source, err, errdefs.ErrInvalidArgument)
		}
	}
	if err := runtime.CheckMounts(spec.Mounts, spec.Binds); err != nil {
		return spec, err
	}
	r := spec.Resources
	if r.CPUCount < 0 || r.MemoryMB < 0 || r.PidsLimit < 0 || r.DiskMB < 0 {
		return spec, fmt.Errorf("negative resource limit %+v: %w", r, errdefs.ErrInvalidArgument)
	}
	if spec.Hostname == "" {
		spec.Hostname = spec.ID
	}
	if len(spec.Hostname) > 63 || strings.ContainsAny(spec.Hostname, " \t\n/") {
		return spec, fmt.Errorf("hostname %q: %w", spec.Hostname, errdefs.ErrInvalidArgument)
	}
	spec.Resources = fillResources(r, b.opts.Defaults)
	spec.Labels = maps.Clone(spec.Labels)
	return spec, nil
}

func checkDir(path, what string) error {
	if !filepath.IsAbs(path) {
		return fmt.Errorf("%s %q must be an absolute path: %w", what, path, errdefs.ErrInvalidArgument)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s: %w: %w", what, err, errdefs.ErrInvalidArgument)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s %s is not a directory: %w", what, path, errdefs.ErrInvalidArgument)
	}
	return nil
}
