package server

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/buildrun"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/telemetry"
	"github.com/warren-sandbox/warren/internal/template/builder"
	"github.com/warren-sandbox/warren/internal/template/image"
)

// newBuilder wires the template builder: build layers and uploads in the
// data dir, RUN steps in the manager's sandboxes, images from imagesDir.
func newBuilder(ctx context.Context, cfg *Config, st store.Store, mgr *lifecycle.Manager, images *image.Puller, metrics *telemetry.Registry, layers *nodeLayers) (*builder.Builder, error) {
	b, err := builder.New(builder.Options{
		Store: st, Runner: buildrun.Runner{M: buildrun.Manager{M: mgr}}, Images: imageResolver{images}, Layers: layers.build, LayerRoot: buildLayersDir(cfg),
		LocalTemplate: layers.localTemplate(),
		FilesDir:      filepath.Join(cfg.DataDir, "build-files"),
		WorkDir:       filepath.Join(cfg.DataDir, "builds"),
		AllowInternet: true,
		BuiltIn:       []string{"base", codeInterpreterID},
		EnvdVersion:   sandbox.EnvdVersion,
		DefaultDiskMB: cfg.DiskMB,
		MaxBuilds:     teamQuotas{st, cfg.TeamQuotas}.builds,
		ObserveBuild:  metrics.ObserveBuild,
	})
	if err != nil {
		return nil, fmt.Errorf("template builder: %w", err)
	}
	if err := b.Recover(ctx); err != nil {
		return nil, err
	}
	return b, nil
}
