package server

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/build"
	"github.com/warren-sandbox/warren/internal/image"
	"github.com/warren-sandbox/warren/internal/layer"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// newBuilder wires the template builder: build layers and uploads in the
// data dir, RUN steps in the manager's sandboxes, images from imagesDir.
func newBuilder(ctx context.Context, cfg *Config, st store.Store, mgr *sandbox.Manager, images *image.Puller) (*build.Builder, error) {
	layerRoot := filepath.Join(cfg.DataDir, "layers")
	layers, err := layer.NewStore(layerRoot)
	if err != nil {
		return nil, err
	}
	b, err := build.New(build.Options{
		Store: st, Runner: mgr, Images: imageResolver{images}, Layers: layers, LayerRoot: layerRoot,
		FilesDir:      filepath.Join(cfg.DataDir, "build-files"),
		WorkDir:       filepath.Join(cfg.DataDir, "builds"),
		AllowInternet: true,
		BuiltIn:       []string{"base", codeInterpreterID},
		EnvdVersion:   sandbox.EnvdVersion,
		DefaultDiskMB: cfg.DiskMB,
	})
	if err != nil {
		return nil, fmt.Errorf("template builder: %w", err)
	}
	if err := b.Recover(ctx); err != nil {
		return nil, err
	}
	return b, nil
}
