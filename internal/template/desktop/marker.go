package desktop

import (
	"time"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// Marker is the JSON record written next to a complete rootfs; its
// presence makes the cache entry valid.
type Marker struct {
	Recipe        string    `json:"recipe"`
	BaseRecipe    string    `json:"base_recipe"`
	ConfigVersion int       `json:"config_version"`
	Packages      []string  `json:"packages"`  // what the recipe asked for on top of base
	Installed     []string  `json:"installed"` // name=version of every installed package
	SizeBytes     int64     `json:"size_bytes"`
	BuiltAt       time.Time `json:"built_at"`
	BuildSeconds  float64   `json:"build_seconds"`
}

// readMarker loads dir's marker, which must be for recipe hash.
func readMarker(dir, hash string) (*Marker, error) {
	var m Marker
	if err := cachedfs.ReadMarker(dir, hash, &m); err != nil {
		return nil, err
	}
	return &m, nil
}
