package codeinterp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/template/base"
)

// Marker is the JSON record written next to a complete rootfs; its
// presence makes the cache entry valid.
type Marker struct {
	Recipe        string    `json:"recipe"`
	BaseRecipe    string    `json:"base_recipe"`
	ConfigVersion int       `json:"config_version"`
	Packages      []string  `json:"packages"`             // what the recipe asked for on top of base
	Installed     []string  `json:"installed"`            // name=version of every installed package
	Deno          string    `json:"deno,omitempty"`       // `deno --version` first line; empty if missing
	DenoError     string    `json:"deno_error,omitempty"` // why Deno is missing
	Kernels       []string  `json:"kernels"`              // languages in KernelsFile
	SizeBytes     int64     `json:"size_bytes"`
	BuiltAt       time.Time `json:"built_at"`
	BuildSeconds  float64   `json:"build_seconds"`
}

func readMarker(dir, hash string) (*Marker, error) {
	data, err := os.ReadFile(filepath.Join(dir, base.MarkerName))
	if err != nil {
		return nil, fmt.Errorf("reading build marker: %w", err)
	}
	var m Marker
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("parsing build marker in %s: %w", dir, err)
	}
	if m.Recipe != hash {
		return nil, fmt.Errorf("build marker in %s is for recipe %q, want %q", dir, m.Recipe, hash)
	}
	if fi, err := os.Stat(filepath.Join(dir, "rootfs")); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("rootfs of %s missing: %w", dir, errors.Join(err, fs.ErrNotExist))
	}
	return &m, nil
}

// writeMarker writes and fsyncs dir's marker, the last write of a build
// before the rename that publishes it.
func writeMarker(dir string, m *Marker) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding build marker: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, base.MarkerName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("writing build marker: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("writing build marker: %w", err)
	}
	return nil
}
