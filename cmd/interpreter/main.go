// Command interpreter is warren's code-interpreter server: a static binary
// that runs inside code-interpreter sandboxes on port 49999 and serves the
// API the official E2B code-interpreter SDKs call (internal/interpreter),
// running code in Jupyter kernels (internal/jupyter).
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

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/interpreter"
	"github.com/warren-sandbox/warren/internal/jupyter"
	"github.com/warren-sandbox/warren/internal/log"
)

// config is everything the flags set.
type config struct {
	host       string
	port       int
	kernels    string
	cwd        string
	envdURL    string
	keepalive  time.Duration
	maxOutput  int64
	maxLine    int
	logLevel   slog.Level
	logJSON    bool
	shutdownIn time.Duration
	warm       string
}

func (c *config) validate() error {
	if c.port < 1 || c.port > 65535 {
		return fmt.Errorf("--port %d is out of range", c.port)
	}
	if c.maxOutput <= 0 || c.maxLine <= 0 {
		return errors.New("--max-output and --max-line must be positive")
	}
	return nil
}

func parseFlags(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("interpreter", flag.ContinueOnError)
	fs.StringVar(&c.host, "host", "0.0.0.0", "address to listen on")
	fs.IntVar(&c.port, "port", interpreter.DefaultPort, "port to listen on")
	fs.StringVar(&c.kernels, "kernels", "", "JSON file mapping language to {argv, env, interrupt_mode}; python defaults to ipykernel")
	fs.StringVar(&c.cwd, "cwd", "/home/user", "default working directory of contexts")
	fs.StringVar(&c.envdURL, "envd-url", fmt.Sprintf("http://localhost:%d/envs", wire.EnvdPort), "envd endpoint with the sandbox's global env (skipped when E2B_LOCAL is set)")
	fs.DurationVar(&c.keepalive, "keepalive", 5*time.Second, "silence after which /execute writes a keepalive line")
	fs.Int64Var(&c.maxOutput, "max-output", 64<<20, "bytes of output per execution before it is truncated")
	fs.IntVar(&c.maxLine, "max-line", 1<<20, "longest stdout/stderr text in one stream line, in bytes")
	fs.TextVar(&c.logLevel, "log-level", slog.LevelInfo, "log level: debug, info, warn or error")
	fs.BoolVar(&c.logJSON, "log-json", false, "log JSON lines instead of text")
	fs.StringVar(&c.warm, "warm-contexts", "", "default contexts besides python whose kernels start with the server, in the background (javascript); others start on first use")
	fs.DurationVar(&c.shutdownIn, "shutdown-timeout", 10*time.Second, "how long a graceful shutdown may take")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	return c, nil
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "interpreter:", err)
		os.Exit(2)
	}
	logger := newLogger(cfg)
	slog.SetDefault(logger)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(log.WithLogger(ctx, logger), cfg); err != nil {
		logger.Error("interpreter failed", "err", err)
		os.Exit(1)
	}
}

func newLogger(cfg *config) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.logLevel}
	if cfg.logJSON {
		return slog.New(slog.NewJSONHandler(os.Stderr, opts))
	}
	return slog.New(slog.NewTextHandler(os.Stderr, opts))
}

// startKernel adapts jupyter.Start to interpreter.StartFunc; the two spec
// types have the same fields.
func startKernel(ctx context.Context, spec interpreter.KernelSpec) (interpreter.Kernel, error) {
	k, err := jupyter.Start(ctx, jupyter.KernelSpec(spec))
	if err != nil {
		return nil, fmt.Errorf("starting kernel: %w", err)
	}
	return k, nil
}

func options(cfg *config) (interpreter.Options, error) {
	kernels, err := interpreter.LoadKernels(cfg.kernels)
	if err != nil {
		return interpreter.Options{}, err
	}
	envdURL := cfg.envdURL
	if os.Getenv("E2B_LOCAL") != "" {
		envdURL = "" // local development: there is no envd to ask
	}
	kernelDir := cfg.cwd
	if st, err := os.Stat(kernelDir); err != nil || !st.IsDir() {
		kernelDir = "" // the kernels start in our cwd; the context cwd snippet then reports the problem
	}
	return interpreter.Options{
		Kernels:           kernels,
		Start:             startKernel,
		Cwd:               cfg.cwd,
		KernelDir:         kernelDir,
		EnvdURL:           envdURL,
		KeepaliveInterval: cfg.keepalive,
		MaxLineBytes:      cfg.maxLine,
		MaxOutputBytes:    cfg.maxOutput,
	}, nil
}

// run serves until ctx ends, then stops accepting requests and shuts every
// kernel down.
func run(ctx context.Context, cfg *config) error {
	opts, err := options(cfg)
	if err != nil {
		return err
	}
	srv, err := interpreter.New(opts)
	if err != nil {
		return err
	}
	// Start the default python kernel before listening: warren's create
	// waits for this port, so the first runCode finds a warm kernel instead
	// of paying for its start. The javascript default context exists from
	// now on; its kernel (Deno, about 290 MB) starts on first use unless
	// --warm-contexts names it. A kernel that fails to start is retried on
	// first use.
	if err := srv.Prestart(ctx, strings.Split(cfg.warm, ",")...); err != nil {
		log.G(ctx).Error("starting the default python context", "err", err)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.host, strconv.Itoa(cfg.port)))
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	hs := &http.Server{
		Handler:           srv.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	log.G(ctx).Info("interpreter listening", "addr", ln.Addr().String(), "languages", kernelNames(opts.Kernels))
	select {
	case err := <-serveErr:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	log.G(ctx).Info("shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.shutdownIn)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		log.G(ctx).Warn("http shutdown", "err", err)
	}
	srv.Close(sctx)
	return nil
}

func kernelNames(k map[string]interpreter.KernelConfig) []string {
	out := make([]string, 0, len(k))
	for name := range k {
		out = append(out, name)
	}
	return out
}
