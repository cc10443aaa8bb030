package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	goruntime "runtime"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/proxy"
	"github.com/warren-sandbox/warren/internal/store/sqlite"
	"github.com/warren-sandbox/warren/internal/subreaper"
)

const (
	defaultDataDir = "/var/lib/warren"
	dbFile         = "warren.db"
)

// serveConfig is every `warren serve` flag.
type serveConfig struct {
	Listen   string
	DataDir  string
	CacheDir string
	// EgressProxyPort and DNSUpstream configure the gateway's services.
	EgressProxyPort int
	DNSUpstream     string
	DiskQuota       bool
	Runtime         string
	Domain          string
	Subnet          string
	Bridge          string
	EnvdPath        string
	MaxTimeout      time.Duration
	// CheckpointAfter: a paused sandbox on a backend that checkpoints
	// (runsc) stays frozen in memory this long, then goes to disk.
	CheckpointAfter time.Duration
	// MetricsRetention: a killed sandbox's metrics history stays this long.
	MetricsRetention time.Duration
	CPUCount         int
	MemoryMB         int
	MaxCPUCount      int
	MaxMemoryMB      int
	DiskMB           int
	LogLevel         slog.Level
	TLS              bool
	// CodeInterpreter builds the code-interpreter-v1 template and binds the
	// interpreter server (InterpreterPath) into sandboxes.
	CodeInterpreter bool
	InterpreterPath string
}

func parseServe(args []string) (*serveConfig, error) {
	c := &serveConfig{}
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.StringVar(&c.Listen, "listen", "127.0.0.1:3000", "address for the API and all sandbox traffic")
	fs.StringVar(&c.DataDir, "data-dir", defaultDataDir, "where the database and sandbox state live")
	fs.StringVar(&c.CacheDir, "cache-dir", "/var/cache/warren", "where built templates are cached, shared by data dirs")
	fs.StringVar(&c.Runtime, "runtime", "runsc", "default runtime backend: runsc (gVisor) or runc")
	fs.StringVar(&c.Domain, "domain", "localhost", "sandbox domain: sandboxes answer at <port>-<id>.<domain>")
	fs.StringVar(&c.Subnet, "subnet", "10.99.0.0/16", "private range for sandbox addresses; must not overlap the host's")
	fs.StringVar(&c.Bridge, "bridge", "warren0", "name of the host bridge sandboxes attach to")
	fs.StringVar(&c.EnvdPath, "envd", "", "path of the static envd binary (default: next to warren)")
	fs.DurationVar(&c.MaxTimeout, "max-timeout", 24*time.Hour, "longest sandbox timeout a request may ask for (0: no cap)")
	fs.DurationVar(&c.CheckpointAfter, "checkpoint-after", 30*time.Second, "how long a paused runsc sandbox stays frozen in memory before its memory is checkpointed to disk (0: at once)")
	fs.DurationVar(&c.MetricsRetention, "metrics-retention", time.Hour, "how long a killed sandbox's metrics history stays readable (0: dropped when it ends)")
	fs.IntVar(&c.CPUCount, "default-cpu", 2, "CPUs per sandbox when the template does not say")
	fs.IntVar(&c.MemoryMB, "default-memory", 512, "memory MB per sandbox when the template does not say")
	fs.IntVar(&c.MaxCPUCount, "max-cpu", goruntime.NumCPU(), "the most CPUs a create may ask for (cpuCount)")
	fs.IntVar(&c.MaxMemoryMB, "max-memory", 8192, "the most memory MB a create may ask for (memoryMB)")
	fs.IntVar(&c.DiskMB, "default-disk", 4096, "disk MB per sandbox when the template does not say")
	fs.TextVar(&c.LogLevel, "log-level", slog.LevelInfo, "debug, info, warn or error (a bad level is an error)")
	fs.BoolVar(&c.CodeInterpreter, "code-interpreter", true, "build and serve the code-interpreter-v1 template")
	fs.StringVar(&c.InterpreterPath, "interpreter", "", "path of the static interpreter server binary (default: next to warren)")
	fs.IntVar(&c.EgressProxyPort, "egress-proxy-port", 4380, "port of the egress proxy on the sandbox gateway, which enforces allowOut domains (0: domain rules are refused)")
	fs.StringVar(&c.DNSUpstream, "dns-upstream", "", "resolver for sandboxes' DNS (host:port; default the host's first IPv4 nameserver; off: none)")
	fs.BoolVar(&c.DiskQuota, "disk-quota", true, "give each sandbox a disk of its own of --default-disk MB for its writable layer (ENOSPC inside when full)")
	fs.BoolVar(&c.TLS, "tls", false, "serve HTTPS (h2 and http/1.1) with a CA and wildcard certificate warren makes in <data-dir>/tls")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if c.MetricsRetention < 0 {
		return nil, fmt.Errorf("--metrics-retention must not be negative")
	}
	if c.Runtime != "runc" && c.Runtime != "runsc" {
		return nil, fmt.Errorf("--runtime must be runc or runsc, not %q", c.Runtime)
	}
	if c.EnvdPath == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding envd: %w", err)
		}
		c.EnvdPath = filepath.Join(filepath.Dir(exe), "envd")
	}
	if c.InterpreterPath == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("finding the interpreter: %w", err)
		}
		c.InterpreterPath = filepath.Join(filepath.Dir(exe), "interpreter")
	}
	return c, nil
}

func runServe(args []string) error {
	cfg, err := parseServe(args)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	slog.SetDefault(logger)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	ctx = log.WithLogger(ctx, logger)
	return serve(ctx, cfg)
}

func serve(ctx context.Context, cfg *serveConfig) error {
	if os.Geteuid() != 0 {
		return errors.New("warren serve must run as root: it creates namespaces, mounts and cgroups")
	}
	if _, err := os.Stat(cfg.EnvdPath); err != nil {
		return fmt.Errorf("envd binary: %w (build it with 'make build')", err)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return fmt.Errorf("creating data dir: %w", err)
	}
	// The runtimes' orphans become warren's to reap, so a stopped runsc
	// sandbox is gone when its processes exit, not when PID 1 gets to it.
	if err := subreaper.Start(ctx); err != nil {
		return fmt.Errorf("becoming the reaper of the runtimes' processes: %w", err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(cfg.DataDir, dbFile))
	if err != nil {
		return err
	}
	defer st.Close()
	key, generated, err := adminKey(ctx, st)
	if err != nil {
		return err
	}
	api := apiserver.New(apiserver.Options{Store: st, Domain: cfg.Domain, MaxTimeout: cfg.MaxTimeout,
		MaxCPUCount: cfg.MaxCPUCount, MaxMemoryMB: cfg.MaxMemoryMB})
	ln, caPath, err := listen(cfg)
	if err != nil {
		return err
	}
	root := &switchHandler{}
	root.set(api)
	srv := &http.Server{Handler: root, ReadHeaderTimeout: 30 * time.Second}
	srvErr := make(chan error, 1)
	go func() { srvErr <- srv.Serve(ln) }()

	mgr, netMgr, err := setup(ctx, cfg, st)
	if err != nil {
		_ = srv.Close()
		return err
	}
	api.SetManager(mgr)
	go mgr.SampleMetrics(ctx)
	builder, err := startBuilder(ctx, cfg, st, mgr, api)
	if err != nil {
		_ = srv.Close()
		return err
	}
	defer builder.Shutdown()
	root.set(proxy.New(mgr, api, cfg.Domain))
	api.SetReady(true)
	printReady(cfg, ln.Addr().String(), key, generated, caPath)

	select {
	case <-ctx.Done():
	case err := <-srvErr:
		return fmt.Errorf("serving: %w", err)
	}
	log.G(ctx).Info("shutting down; sandboxes keep running and are re-adopted on the next start")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	mgr.Shutdown()
	_ = srv.Shutdown(sctx)
	_ = netMgr.Close()
	if mgr.Count() == 0 {
		// Nothing runs that needs the bridge; the next start recreates it.
		if err := netMgr.Teardown(sctx); err != nil {
			log.G(ctx).Warn("removing the sandbox network", "err", err)
		}
	}
	return nil
}

// adminKey stores WARREN_API_KEY's hash, or generates a key when it is unset.
func adminKey(ctx context.Context, st *sqlite.Store) (key string, generated bool, err error) {
	key = os.Getenv("WARREN_API_KEY")
	if key == "" {
		key, err = createKey(ctx, st, "admin-"+time.Now().UTC().Format("20060102-150405"), true)
		return key, true, err
	}
	if !apikey.Valid(key) {
		return "", false, errors.New("WARREN_API_KEY must be e2b_ followed by 40 lowercase hex characters (the SDKs check this format)")
	}
	if _, err := st.GetAPIKeyByHash(ctx, apikey.Hash(key)); err == nil {
		return key, false, nil
	}
	return key, false, storeKey(ctx, st, key, "admin-env", true)
}

// switchHandler lets the listener open (and /health answer 503) before the
// sandbox machinery is ready.
type switchHandler struct{ h atomicHandler }

func (s *switchHandler) set(h http.Handler) { s.h.Store(&h) }

func (s *switchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	(*s.h.Load()).ServeHTTP(w, r)
}
