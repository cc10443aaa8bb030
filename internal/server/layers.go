package server

import (
	"context"
	"net/http"
	"path/filepath"

	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
	"github.com/warren-sandbox/warren/internal/template/layershare"
)

// nodeLayers are a data dir's two layer stores (build layers, and the
// images' own) and, on a cluster node, the resolver that maps the layer
// paths other nodes recorded to them. Each store is opened once per
// process: opening one clears unfinished work.
type nodeLayers struct {
	build, images *layer.Store
	share         *layershare.Resolver // nil in one-machine mode
}

// buildLayersDir is where a data dir keeps build (and pulled) layers.
func buildLayersDir(cfg *Config) string { return filepath.Join(cfg.DataDir, "layers") }

// openLayers opens cfg's layer stores; a node also gets the resolver,
// which asks peers with auth, the cluster's signature.
func openLayers(cfg *Config, st store.Store, auth *clusterauth.Signer) (*nodeLayers, error) {
	build, err := layer.NewStore(buildLayersDir(cfg))
	if err != nil {
		return nil, err
	}
	images, err := layer.NewStore(filepath.Join(imagesDir(cfg), "layers"))
	if err != nil {
		return nil, err
	}
	l := &nodeLayers{build: build, images: images}
	if cfg.IsNode() {
		l.share = layershare.New(layershare.Options{
			Store: st, Stores: []*layer.Store{build, images}, Self: cfg.NodeName, Cluster: auth,
			DeadAfter: cfg.NodeDeadAfter, Limit: layerLimit(cfg),
		})
	}
	return l, nil
}

// layerLimit caps one layer, pulled or imported: no more than a sandbox's
// disk could hold.
func layerLimit(cfg *Config) int64 { return int64(max(cfg.DiskMB, 16<<10)) << 20 }

// localTemplate is the manager's and the builder's LocalTemplate: nil,
// so recorded paths are used as they are, unless this is a node.
func (l *nodeLayers) localTemplate() func(context.Context, *store.Template) (*store.Template, error) {
	if l.share == nil {
		return nil
	}
	return l.share.Template
}

// handler serves this node's layers to its peers; nil when not a node.
func (l *nodeLayers) handler() http.Handler {
	if l.share == nil {
		return nil
	}
	return l.share
}

// cached is the heartbeat's test of a template being on this node: all
// its layers in this node's own stores (by key) on a node.
func (l *nodeLayers) cached() func(*store.Template) bool {
	if l.share == nil {
		return nil
	}
	return l.share.Cached
}
