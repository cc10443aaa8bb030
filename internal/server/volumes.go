package server

import (
	"context"

	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/volume"
)

// openVolumes makes the volume service: a loop-mounted image per volume
// under the data dir on one machine, a directory per volume on the
// shared storage on a cluster node. A node without --shared-dir has no
// volumes (nil): one kept on its own disk would be out of reach of every
// other node, and a sandbox placed there could not mount it.
func openVolumes(ctx context.Context, cfg *Config, st store.Store) (*volume.Service, error) {
	if cfg.IsNode() && cfg.SharedDir == "" {
		log.G(ctx).Warn("volumes are not available on this node: they need --shared-dir, storage every node mounts")
		return nil, nil
	}
	b, err := volume.NewBackend(cfg.DataDir, cfg.SharedDir)
	if err != nil {
		return nil, err
	}
	return volume.New(volume.Options{
		Store: st, Backend: b,
		DefaultSizeMB: cfg.VolumeSizeMB,
		TeamMaxMB:     cfg.TeamQuotas.VolumeMB,
	})
}

// apiVolumes is the service as the REST API takes it: nil stays a nil
// interface, which the API answers with 501.
func apiVolumes(v *volume.Service) apiserver.Volumes {
	if v == nil {
		return nil
	}
	return v
}

// managerVolumes is the service as the manager takes it, nil as nil.
func managerVolumes(v *volume.Service) lifecycle.Volumes {
	if v == nil {
		return nil
	}
	return v
}
