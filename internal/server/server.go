package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/proxy"
	"github.com/warren-sandbox/warren/internal/retention"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/subreaper"
	"github.com/warren-sandbox/warren/internal/telemetry"
	"github.com/warren-sandbox/warren/internal/template/builder"
	"github.com/warren-sandbox/warren/internal/usage"
	"github.com/warren-sandbox/warren/internal/volume"
)

// Run serves until ctx ends: it opens the listener first (GET /health
// answers 503 while the rest is prepared), sets up the sandbox network,
// the runtime backends and the built-in templates, re-adopts the sandboxes
// a previous run left, and then answers with the API and the proxy.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Role == RoleAPI {
		return runAPI(ctx, cfg)
	}
	if err := preflight(ctx, &cfg); err != nil {
		return err
	}
	st, err := OpenStore(ctx, cfg.Store, cfg.DataDir)
	if err != nil {
		return err
	}
	defer st.Close()
	key, generated, err := adminKey(ctx, st)
	if err != nil {
		return err
	}
	ln, caPath, err := listen(&cfg)
	if err != nil {
		return err
	}
	// The registry serves the Go runtime's metrics from the start; the
	// parts register theirs as assemble makes them.
	metrics := telemetry.New()
	_, stopMetrics, err := serveMetrics(ctx, cfg.MetricsListen, metrics.Handler())
	if err != nil {
		_ = ln.Close()
		return err
	}
	defer stopMetrics()
	// Until everything is built, an API with nothing behind it answers:
	// /health and every authenticated route 503, with Retry-After.
	root := &switchHandler{}
	root.set(apiserver.Starting())
	// A client gets 30 s to send its headers and a keep-alive connection
	// closes after IdleTimeout; no read or write deadline, because command
	// and file streams may last as long as a sandbox.
	srv := &http.Server{Handler: root, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: cfg.IdleTimeout,
		MaxHeaderBytes: maxHeaderBytes}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(ln) }()

	parts, err := assemble(ctx, &cfg, st, metrics)
	if err != nil {
		_ = srv.Close()
		return err
	}
	defer parts.builder.Shutdown()
	bg := startBackground(ctx, &cfg, st, parts)
	root.set(proxy.New(parts.mgr, parts.api, cfg.Domain))
	printReady(&cfg, ln.Addr().String(), key, generated, caPath)

	select {
	case <-ctx.Done():
	case err := <-srvErr:
		return fmt.Errorf("serving: %w", err)
	}
	shutdown(ctx, &cfg, srv, parts, bg)
	return nil
}

// preflight checks what serving needs and takes the runtimes' orphans.
func preflight(ctx context.Context, cfg *Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("warren serve must run as root: it creates namespaces, mounts and cgroups")
	}
	if _, err := os.Stat(cfg.EnvdPath); err != nil {
		return fmt.Errorf("envd binary: %w (build it with 'make build')", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	if cfg.SharedDir != "" {
		id, err := openShare(cfg.SharedDir)
		if err != nil {
			return err
		}
		cfg.ShareID = id
	}
	// The runtimes' orphans become warren's to reap, so a stopped runsc
	// sandbox is gone when its processes exit, not when PID 1 gets to it.
	if err := subreaper.Start(ctx); err != nil {
		return fmt.Errorf("becoming the reaper of the runtimes' processes: %w", err)
	}
	return nil
}

// background is what runs beside the API until ctx ends; the channels
// close when the parts a shutdown waits for have finished.
type background struct{ pooled, events chan struct{} }

func startBackground(ctx context.Context, cfg *Config, st store.Store, parts *parts) background {
	bg := background{pooled: make(chan struct{}), events: make(chan struct{})}
	go parts.mgr.metrics.Run(ctx)
	go func() { parts.mgr.pools.Run(ctx); close(bg.pooled) }()
	go parts.builder.CollectFilesEvery(ctx, 10*time.Minute)
	go retention.New(parts.mgr, retention.Options{
		Paused: cfg.PausedRetention, Snapshots: cfg.SnapshotRetention, OnNode: nodeName(cfg) != "",
	}).Run(ctx, time.Minute)
	// Deliveries left pending by the last run resume here.
	go func() { parts.events.Run(ctx); close(bg.events) }()
	go usage.New(parts.mgr, st, cfg.UsageRetention, nil).OnNode(nodeName(cfg)).Run(ctx)
	if cfg.IsNode() {
		go newHeartbeat(cfg, st, parts.mgr, parts.layers.cached()).run(ctx)
	}
	return bg
}

// shutdown stops serving and lets the sandboxes run on: the next start
// re-adopts them. Pooled sandboxes, which belong to no one, go.
func shutdown(ctx context.Context, cfg *Config, srv *http.Server, parts *parts, bg background) {
	log.G(ctx).Info("shutting down; sandboxes keep running and are re-adopted on the next start")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := parts.mgr.Shutdown(sctx); err != nil {
		log.G(ctx).Warn("stopping the sandbox manager", "err", err)
	}
	_ = srv.Shutdown(sctx)
	select {
	case <-bg.pooled:
	case <-time.After(time.Minute):
		log.G(ctx).Warn("pooled sandboxes still being destroyed; the next start removes what is left")
	}
	select { // the events recorded last are written before the store closes
	case <-bg.events:
	case <-time.After(10 * time.Second):
		log.G(ctx).Warn("sandbox events still being written; the last ones may be lost")
	}
	_ = parts.net.Close()
	if parts.mgr.Count() == 0 {
		// Nothing runs that needs the bridge; the next start recreates it.
		tctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer stop()
		if err := parts.net.Teardown(tctx); err != nil {
			log.G(ctx).Warn("removing the sandbox network", "err", err)
		}
		removeEmptyRunRoot(runRoot(cfg.DataDir))
	}
}

// maxHeaderBytes bounds a request's headers; E2B's clients send a few
// hundred bytes.
const maxHeaderBytes = 256 << 10

// parts are the components Run builds once the listener is open.
type parts struct {
	net     *network.Manager
	mgr     *machine
	builder *builder.Builder
	api     *apiserver.Server
	events  *events.Service
	layers  *nodeLayers
}

// assemble makes the sandbox machinery and then the API over it, each part
// given everything it needs when it is made. A node signs its calls to
// its peers, and checks the API role's and its peers' calls, with the
// cluster secret.
func assemble(ctx context.Context, cfg *Config, st store.Store, metrics *telemetry.Registry) (*parts, error) {
	evs := newEvents(cfg, st, metrics)
	auth, err := cfg.clusterSigner()
	if err != nil {
		return nil, err
	}
	layers, err := openLayers(cfg, st, auth)
	if err != nil {
		return nil, err
	}
	vols, err := openVolumes(ctx, cfg, st)
	if err != nil {
		return nil, fmt.Errorf("opening volumes: %w", err)
	}
	mgr, netMgr, starts, err := setup(ctx, cfg, st, metrics, evs, layers, managerVolumes(vols))
	if err != nil {
		return nil, err
	}
	images, err := openImages(cfg, layers.images)
	if err != nil {
		return nil, err
	}
	b, err := newBuilder(ctx, cfg, st, mgr.Manager, images, metrics, layers)
	if err != nil {
		return nil, err
	}
	metrics.RegisterPools(mgr.pools.Stats)
	if vols != nil {
		metrics.RegisterVolumes(func(ctx context.Context) ([]volume.Info, error) { return vols.List(ctx, "") }, telemetry.DefaultVolumeLimit)
	}
	metrics.RegisterSandboxes(mgr.Census, cfg.MetricsSandboxLimit)
	api := apiserver.New(apiserver.Options{
		Store: st, Manager: mgr, Builder: b, Images: images,
		ScratchDir: filepath.Join(cfg.DataDir, "builds"),
		Domain:     cfg.Domain, MaxTimeout: cfg.MaxTimeout,
		MaxCPUCount: cfg.MaxCPUCount, MaxMemoryMB: cfg.MaxMemoryMB,
		Metrics: metrics.Handler(), ObserveRequest: metrics.ObserveRequest,
		Events: evs, NodeDeadAfter: cfg.NodeDeadAfter, Layers: layers.handler(), Cluster: auth,
		Starts: starts.Stats, NodeName: nodeName(cfg),
		Volumes: apiVolumes(vols),
	})
	// The creates this server was running died with its last run: their
	// keys are free for a retry to create afresh.
	if n, err := st.ReleaseIdempotencyKeysOf(ctx, nodeName(cfg)); err != nil {
		return nil, fmt.Errorf("releasing the idempotency keys of interrupted creates: %w", err)
	} else if n > 0 {
		log.G(ctx).Warn("released the idempotency keys of creates a restart interrupted", "keys", n)
	}
	return &parts{net: netMgr, mgr: mgr, builder: b, api: api, events: evs, layers: layers}, nil
}

// adminKey stores WARREN_API_KEY's hash, or generates a key when it is unset.
func adminKey(ctx context.Context, st store.Store) (key string, generated bool, err error) {
	key = os.Getenv("WARREN_API_KEY")
	if key == "" {
		key, err = CreateKey(ctx, st, apikey.Spec{Name: "admin-" + time.Now().UTC().Format("20060102-150405"), Admin: true})
		return key, true, err
	}
	if !apikey.Valid(key) {
		return "", false, errors.New("WARREN_API_KEY must be e2b_ followed by 40 lowercase hex characters (the SDKs check this format)")
	}
	if _, err := st.GetAPIKeyByHash(ctx, apikey.Hash(key)); err == nil {
		return key, false, nil
	}
	return key, false, StoreKey(ctx, st, key, apikey.Spec{Name: "admin-env", Admin: true})
}

// switchHandler lets the listener open (and /health answer 503) before the
// sandbox machinery is ready.
type switchHandler struct{ h atomicHandler }

func (s *switchHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}
