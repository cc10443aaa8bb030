// Package layershare gives a cluster node its own copy of every template
// layer it runs. The shared store records a template's layers by path,
// and the path is that of the node that built it (its layer store,
// <data dir>/layers/<short key>); another node has no such directory, or,
// on one test machine, has it but must not use it (it belongs to another
// process, whose collector may delete it). So a node maps every path in a
// layer store's layout to its own stores by key, and pulls a layer it
// lacks from a live peer on first use (GET /internal/layers/{key}, a tar
// of the layer that Extract checks as hostile input). Paths outside that
// layout (the built-in templates in each node's cache dir) are used as
// they are.
//
// One-machine mode has no Resolver: paths are used as recorded.
package layershare

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// pullTimeout bounds one pull of a layer, whoever waits for it.
const pullTimeout = 30 * time.Minute

// Options configure a Resolver.
type Options struct {
	// Store holds the node records that name the peers.
	Store store.Store
	// Stores are this node's layer stores, searched in order (build
	// layers, image layers); pulled layers go into the first, whose
	// collector keeps what templates, builds and snapshots use.
	Stores []*layer.Store
	// Self is this node's name: it never asks itself.
	Self string
	// Cluster signs the requests to peers with the cluster secret, which
	// is all a peer's layer endpoint accepts (no API key goes to an
	// address read from the store).
	Cluster *clusterauth.Signer
	// DeadAfter: a peer whose heartbeat is older is not asked.
	DeadAfter time.Duration
	// Limit caps the bytes of a pulled layer's files; 0: only the disk's
	// reserve (see layer.Options.Limit).
	Limit int64
	// Client makes the requests to peers; nil uses one with sane timeouts.
	Client *http.Client
}

// Resolver maps recorded layer paths to this node's layers and serves
// them to peers.
type Resolver struct {
	opts Options

	mu       sync.Mutex       // guards inflight
	inflight map[string]*pull // short key -> the pull under way
}

// pull is one fetch of a layer that every create wanting it waits for.
type pull struct {
	done chan struct{}
	dir  string
	err  error
}

// New returns a Resolver over opts.
func New(opts Options) *Resolver {
	if opts.Client == nil {
		opts.Client = &http.Client{Transport: &http.Transport{
			Proxy: nil, ResponseHeaderTimeout: time.Minute, IdleConnTimeout: time.Minute,
		}}
	}
	return &Resolver{opts: opts, inflight: map[string]*pull{}}
}

// Template returns a copy of tpl whose layers and rootfs are this node's
// own, pulling those it lacks. It fails with errdefs.ErrUnavailable when
// no live node can hand over a missing layer.
func (r *Resolver) Template(ctx context.Context, tpl *store.Template) (*store.Template, error) {
	out := *tpl
	out.Layers = slices.Clone(tpl.Layers)
	for i, p := range out.Layers {
		local, err := r.path(ctx, tpl.ID, p)
		if err != nil {
			return nil, err
		}
		out.Layers[i] = local
	}
	if out.RootfsPath != "" {
		local, err := r.path(ctx, tpl.ID, out.RootfsPath)
		if err != nil {
			return nil, err
		}
		out.RootfsPath = local
	}
	return &out, nil
}

// Cached reports whether every layer of tpl is on this node already: a
// create here starts without pulling anything.
func (r *Resolver) Cached(tpl *store.Template) bool {
	paths := tpl.Layers
	if len(paths) == 0 {
		paths = []string{tpl.RootfsPath}
	}
	for _, p := range paths {
		if p == "" {
			return false
		}
		if short, ok := layer.ShortKey(p); ok {
			if _, ok := r.local(short); !ok {
				return false
			}
		} else if _, err := os.Stat(p); err != nil {
			return false
		}
	}
	return true
}

// path is this node's copy of the layer at p, recorded for template tplID.
func (r *Resolver) path(ctx context.Context, tplID, p string) (string, error) {
	short, ok := layer.ShortKey(p)
	if !ok {
		return p, nil
	}
	if dir, ok := r.local(short); ok {
		return dir, nil
	}
	return r.pull(ctx, tplID, short)
}

// local finds the layer short in this node's stores.
func (r *Resolver) local(short string) (string, bool) {
	for _, s := range r.opts.Stores {
		if key, ok := s.Find(short); ok {
			return s.Path(key), true
		}
	}
	return "", false
}

// pull fetches layer short once however many creates want it at the same
// time. The fetch is detached from the first caller's ctx, so a create
// that gives up does not fail the others waiting on the same layer.
func (r *Resolver) pull(ctx context.Context, tplID, short string) (string, error) {
	r.mu.Lock()
	p := r.inflight[short]
	if p == nil {
		p = &pull{done: make(chan struct{})}
		r.inflight[short] = p
		go func() {
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pullTimeout)
			defer cancel()
			if dir, ok := r.local(short); ok { // pulled just before
				p.dir = dir
			} else {
				p.dir, p.err = r.fetch(fctx, tplID, short)
			}
			r.mu.Lock()
			delete(r.inflight, short)
			r.mu.Unlock()
			close(p.done)
		}()
	}
	r.mu.Unlock()
	select {
	case <-p.done:
		return p.dir, p.err
	case <-ctx.Done():
		return "", fmt.Errorf("waiting for layer %s of template '%s': %w", short, tplID, ctx.Err())
	}
}

// unavailable is the error of a layer no live node handed over.
func unavailable(tplID, short, why string) error {
	return errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf(
		"template '%s' cannot start on this node: no node has its layers (layer %s: %s)", tplID, short, why))
}
