package server

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/cluster"
	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/telemetry"
)

// runAPI serves the API role until ctx ends: no sandboxes, no root, only
// the shared store and the nodes it finds there (docs/cluster.md).
func runAPI(ctx context.Context, cfg Config) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if cfg.TLS {
		if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil { // its certificate is kept there
			return fmt.Errorf("creating data dir: %w", err)
		}
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
	metrics := telemetry.New()
	metrics.RegisterNodes(st.ListNodes, cfg.NodeDeadAfter)
	_, stopMetrics, err := serveMetrics(ctx, cfg.MetricsListen, metrics.Handler())
	if err != nil {
		return err
	}
	defer stopMetrics()
	ln, caPath, err := listen(&cfg)
	if err != nil {
		return err
	}
	evs := newEvents(&cfg, st, metrics)
	auth, err := cfg.clusterSigner()
	if err != nil {
		return err
	}
	api := newClusterAPI(&cfg, st, metrics, evs, auth)
	srv := &http.Server{Handler: api, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: cfg.IdleTimeout,
		MaxHeaderBytes: maxHeaderBytes}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(ln) }()
	evsDone := make(chan struct{})
	go func() { evs.Run(ctx); close(evsDone) }()
	go api.Run(ctx)
	printReady(&cfg, ln.Addr().String(), key, generated, caPath)
	select {
	case <-ctx.Done():
	case err := <-srvErr:
		return fmt.Errorf("serving: %w", err)
	}
	log.G(ctx).Info("shutting down the API role")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_ = srv.Shutdown(sctx)
	select { // the node-lost events recorded last are written before the store closes
	case <-evsDone:
	case <-time.After(10 * time.Second):
	}
	return nil
}

// newClusterAPI is the API role's handler: apiserver's routes, answered
// from the store or relayed to the nodes.
func newClusterAPI(cfg *Config, st store.Store, metrics *telemetry.Registry, evs *events.Service, auth *clusterauth.Signer) *cluster.API {
	rest := apiserver.Options{
		Domain: cfg.Domain, MaxTimeout: cfg.MaxTimeout,
		MaxCPUCount: cfg.MaxCPUCount, MaxMemoryMB: cfg.MaxMemoryMB,
		Metrics: metrics.Handler(), ObserveRequest: metrics.ObserveRequest,
		Events: evs, NodeDeadAfter: cfg.NodeDeadAfter,
	}
	return cluster.New(cluster.Options{Store: st, REST: rest, Domain: cfg.Domain,
		DeadAfter: cfg.NodeDeadAfter, ReapEvery: cfg.HeartbeatInterval, Events: evs,
		ObserveRequest: metrics.ObserveRequest, Cluster: auth})
}
