// Package cachedfs holds what every cached-rootfs recipe (the base template,
// code-interpreter-v1, desktop) shares: a build is named by the hash of its recipe,
// built in a temporary directory under a lock, measured, and published by
// renaming it into place once its marker (written last) records the recipe.
// Also here: the command runner that feeds a tool's output to the log and
// the progress display, and the mount-safe removal and trimming of trees.
package cachedfs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// MarkerName is the marker's file name inside a cache entry; its presence
// is what makes the entry valid.
const MarkerName = ".complete"

// Hash names a recipe in the cache: 16 hex characters of a SHA-256 over the
// recipe's canonical text form, which the caller makes independent of
// ordering and duplicates.
func Hash(canonical string) string {
	sum := sha256.Sum256([]byte(canonical))
	return hex.EncodeToString(sum[:])[:16]
}

// ReadMarker decodes dir's marker into m and checks that it is for recipe
// hash and that the rootfs beside it exists. A missing marker or rootfs
// gives an fs.ErrNotExist error.
func ReadMarker(dir, hash string, m any) error {
	data, err := os.ReadFile(filepath.Join(dir, MarkerName))
	if err != nil {
		return fmt.Errorf("reading build marker: %w", err)
	}
	var head struct {
		Recipe string `json:"recipe"`
	}
	if err := errors.Join(json.Unmarshal(data, &head), json.Unmarshal(data, m)); err != nil {
		return fmt.Errorf("parsing build marker %s: %w", filepath.Join(dir, MarkerName), err)
	}
	if head.Recipe != hash {
		return fmt.Errorf("build marker in %s is for recipe %q, want %q", dir, head.Recipe, hash)
	}
	if fi, err := os.Stat(filepath.Join(dir, "rootfs")); err != nil || !fi.IsDir() {
		return fmt.Errorf("rootfs of %s missing: %w", dir, errors.Join(err, fs.ErrNotExist))
	}
	return nil
}

// WriteMarker writes and fsyncs dir's marker (m as JSON, with its recipe
// hash in a "recipe" field); it is the last write of a build before the
// rename that publishes it.
func WriteMarker(dir string, m any) error {
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("encoding build marker: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, MarkerName), os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("writing build marker: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("writing build marker: %w", err)
	}
	return nil
}
