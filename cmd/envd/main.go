// Command envd is warren's in-sandbox agent: a static binary that serves the
// E2B envd protocol (process and filesystem services, /files, /init, ...) on
// port 49983 and, as the sandbox's init or subreaper, reaps orphaned
// processes.

// envd's GOMAXPROCS stays what it was at start: the sandbox's CPU count
// does not change while it runs, and re-reading the cgroup's CPU limit on
// each of sysmon's wake-ups is a trapped syscall under gVisor.
//
//go:debug updatemaxprocs=0
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd"
	"github.com/warren-sandbox/warren/internal/envd/oomguard"
	"github.com/warren-sandbox/warren/internal/envd/process"
	"github.com/warren-sandbox/warren/internal/envd/reaper"
	"github.com/warren-sandbox/warren/internal/log"
)

// config is everything envd's flags set.
type config struct {
	oomGuard   bool
	oomCgroup  string
	oomOnWake  bool
	host       string
	port       int
	logLevel   slog.Level
	logJSON    bool
	startCmd   string
	subreaper  bool
	retention  time.Duration
	showVer    bool
	shutdownIn time.Duration
	childOOM   int
	threads    int
	cmdUser    string
	cmdCwd     string
	cmdEnv     map[string]string
}

func (c *config) validate() error {
	if c.port < 1 || c.port > 65535 {
		return fmt.Errorf("--port %d is out of range", c.port)
	}
	if c.retention <= 0 {
		return errors.New("--process-retention must be positive")
	}
	return nil
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("envd", flag.ContinueOnError)
	fs.StringVar(&c.host, "host", "0.0.0.0", "address to listen on")
	fs.IntVar(&c.port, "port", envd.DefaultPort, "port to listen on")
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn or error")
	fs.BoolVar(&c.logJSON, "log-json", false, "log JSON lines instead of text")
	fs.StringVar(&c.startCmd, "cmd", "", "command to run with /bin/sh -c at startup, as root (tag \"startCmd\")")
	fs.IntVar(&c.threads, "reserve-threads", 0, "OS threads to make at start and keep, so envd still runs when a fork bomb has taken every pid of a cgroup that counts threads (runc)")
	fs.IntVar(&c.childOOM, "child-oom-score-adj", 500, "oom_score_adj for the processes envd starts (0: inherit envd's)")
	fs.StringVar(&c.cmdUser, "cmd-user", "root", "user the --cmd command runs as")
	fs.StringVar(&c.cmdCwd, "cmd-cwd", "", "working directory of the --cmd command (default: the user's home)")
	fs.Func("cmd-env", "KEY=VALUE set for the --cmd command (repeatable)", func(v string) error {
		k, val, ok := strings.Cut(v, "=")
		if !ok || k == "" {
			return fmt.Errorf("--cmd-env %q: want KEY=VALUE", v)
		}
		if c.cmdEnv == nil {
			c.cmdEnv = map[string]string{}
		}
		c.cmdEnv[k] = val
		return nil
	})
	fs.BoolVar(&c.subreaper, "subreaper", true, "become a child subreaper and reap every orphan (always on as PID 1)")
	fs.DurationVar(&c.retention, "process-retention", process.DefaultRetention, "how long exited processes stay known to Connect")
	fs.DurationVar(&c.shutdownIn, "shutdown-timeout", 5*time.Second, "how long to wait for requests on shutdown")
	fs.BoolVar(&c.showVer, "version", false, "print the envd API version and exit")
	fs.BoolVar(&c.oomGuard, "oom-guard", false, "kill the largest process when the sandbox runs out of memory (for kernels that would kill the whole sandbox: gVisor)")
	fs.StringVar(&c.oomCgroup, "oom-guard-cgroup", "", "with --oom-guard: measure the memory cgroup mounted here (the sandbox's own, e.g. /sys/fs/cgroup) instead of /proc/meminfo, for sandboxes on the host's kernel")
	fs.BoolVar(&c.oomOnWake, "oom-guard-on-wake", false, "with --oom-guard: check memory only when POST /memory/check asks (the host watches the sandbox's memory), instead of polling")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return c, c.validate()
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "envd:", err)
		os.Exit(2)
	}
	if cfg.showVer {
		fmt.Println(envd.Version)
		return
	}
	markInheritedCloexec()
	var handler slog.Handler = slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.logLevel})
	if cfg.logJSON {
		handler = slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.logLevel})
	}
	logger := slog.New(handler).With("component", "envd")
	ctx := log.WithLogger(context.Background(), logger)
	if err := run(ctx, cfg); err != nil {
		logger.Error("envd failed", "err", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, cfg *config) error {
	if cfg.threads > 0 {
		reserveThreads(cfg.threads)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	reapAll := cfg.subreaper || os.Getpid() == 1
	if cfg.subreaper && os.Getpid() != 1 {
		if err := reaper.BecomeSubreaper(); err != nil {
			return err
		}
	}
	var memWake chan struct{}
	if cfg.oomGuard {
		var guard *oomguard.Guard
		if cfg.oomCgroup != "" {
			guard = oomguard.NewCgroup(log.G(ctx), cfg.oomCgroup)
		} else {
			guard = oomguard.New(log.G(ctx))
		}
		if cfg.oomOnWake {
			memWake = make(chan struct{}, 1)
			go guard.RunOnWake(ctx, memWake)
		} else {
			go guard.Run(ctx)
		}
	}
	r := reaper.New(reapAll)
	r.ChildOOMScoreAdj = cfg.childOOM
	reaperCtx, stopReaper := context.WithCancel(context.WithoutCancel(ctx))
	defer stopReaper()
	go r.Run(reaperCtx)

	srv, err := envd.New(envd.Config{Reaper: r, ProcessRetention: cfg.retention, Logger: log.G(ctx), MemoryWake: memWake, RunDir: "/run/e2b"})
	if err != nil {
		return err
	}
	if cfg.startCmd != "" {
		if err := startCommand(ctx, srv, cfg); err != nil {
			return err
		}
	}
	return serve(ctx, cfg, srv)
}

// startCommand runs the --cmd command (a template's start command) as
// --cmd-user, in --cmd-cwd, with --cmd-env on top of envd's environment.
func startCommand(ctx context.Context, srv *envd.Server, cfg *config) error {
	cmd := cfg.startCmd
	u, err := srv.State().User(cfg.cmdUser)
	if err != nil {
		return fmt.Errorf("start command: %w", err)
	}
	pcfg := &pb.ProcessConfig{Cmd: "/bin/sh", Args: []string{"-c", cmd}, Envs: cfg.cmdEnv}
	if cfg.cmdCwd != "" {
		pcfg.Cwd = &cfg.cmdCwd
	}
	logger := log.G(ctx)
	stdout, stderr := newOutputLog(logger, "stdout"), newOutputLog(logger, "stderr")
	pid, err := srv.Processes().StartBackground(ctx, u, pcfg, "startCmd", stdout, stderr)
	if err != nil {
		return fmt.Errorf("start command: %w", err)
	}
	log.G(ctx).Info("start command running", "pid", pid, "cmd", cmd)
	return nil
}

// serve runs the HTTP server until ctx ends, then shuts down: every process
// group is killed, and in-flight requests get what is left of shutdownIn to
// finish before the remaining connections are cut.
func serve(ctx context.Context, cfg *config, srv *envd.Server) error {
	addr := net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port))
	hs := &http.Server{
		Addr:              addr,
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       10 * time.Minute,
		// Requests keep the logger but not the shutdown signal: Shutdown, not
		// cancellation, decides how in-flight requests end.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	log.G(ctx).Info("envd listening", "addr", ln.Addr().String(), "version", envd.Version, "pid", os.Getpid())
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	log.G(ctx).Info("shutting down")
	shutCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.shutdownIn)
	defer cancel()
	// Processes first: their streams then end with a proper end event and
	// Shutdown has only idle connections and short requests left to wait for.
	srv.Close(shutCtx)
	if err := hs.Shutdown(shutCtx); err != nil {
		_ = hs.Close()
	}
	return nil
}
