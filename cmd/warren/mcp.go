package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/warren-sandbox/warren/internal/mcpserver"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// mcpFlags are `warren mcp`'s settings.
type mcpFlags struct {
	conn           connFlags
	listen         string
	template       string
	sandboxTimeout time.Duration
	sessionTimeout time.Duration
	logLevel       string
}

// mcpCommand is `warren mcp`: an MCP server for agents, over stdio or,
// with --listen, streamable HTTP. It finds the warren server as the other
// client commands do: flags, then E2B_* variables, then `warren login`.
func mcpCommand() *cobra.Command {
	var f mcpFlags
	cmd := &cobra.Command{
		Use:     "mcp",
		Short:   "MCP server for agents (stdio, or streamable HTTP with --listen)",
		GroupID: "client",
		Args:    cobra.NoArgs,
		RunE:    func(*cobra.Command, []string) error { return runMCP(f) },
	}
	fs := cmd.Flags()
	f.conn.register(fs)
	fs.StringVar(&f.listen, "listen", "", "serve streamable HTTP on this address (e.g. 127.0.0.1:8931) instead of stdio; clients send `Authorization: Bearer <key>` with $WARREN_MCP_KEY, else the API key")
	fs.StringVar(&f.template, "template", mcpserver.DefaultTemplate, "template of the sandbox each session gets")
	fs.DurationVar(&f.sandboxTimeout, "sandbox-timeout", mcpserver.DefaultSandboxTimeout, "lifetime of a session's sandbox, renewed while the session uses it")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", 30*time.Minute, "with --listen: close an HTTP session idle this long, and kill its sandbox (0: never)")
	fs.StringVar(&f.logLevel, "log-level", "info", "debug, info, warn or error (the log goes to stderr)")
	return cmd
}

func runMCP(f mcpFlags) error {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return fmt.Errorf("mcp: --log-level: %w", err)
	}
	// stdout is the protocol's channel over stdio: the log goes to stderr.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	c, err := f.conn.client()
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	srv := mcpserver.New(c, mcpserver.Options{Template: f.template, SandboxTimeout: f.sandboxTimeout,
		Version: version, Logger: logger})
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if f.listen == "" {
		logger.Info("serving MCP on stdio", "api", c.Config().APIURL, "template", f.template)
		return srv.Serve(ctx, &mcp.StdioTransport{})
	}
	return serveMCPHTTP(ctx, srv, c, f, logger)
}

// mcpKeyEnv names the key HTTP clients of `warren mcp --listen` must
// send; without it they send the API key the server itself uses.
const mcpKeyEnv = "WARREN_MCP_KEY"

// mcpKey is the key HTTP clients must send: $WARREN_MCP_KEY, else the
// API key warren mcp reaches the server with, so that whoever may use
// the MCP endpoint could as well use the API directly.
func mcpKey(c *warren.Client) string {
	if k := os.Getenv(mcpKeyEnv); k != "" {
		return k
	}
	return c.Config().APIKey
}

// serveMCPHTTP serves streamable HTTP on f.listen until ctx ends, then
// cancels the calls in flight, kills the sessions' sandboxes and stops.
// Every request must carry mcpKey, as a REST request carries its key.
func serveMCPHTTP(ctx context.Context, srv *mcpserver.Server, c *warren.Client, f mcpFlags, logger *slog.Logger) error {
	defer srv.Close()
	h, err := srv.Handler(mcpserver.HTTPOptions{Key: mcpKey(c), SessionTimeout: f.sessionTimeout})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", f.listen)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	logger.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String(), "template", f.template)
	select {
	case err := <-errc:
		return fmt.Errorf("mcp: serving HTTP: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	srv.Close()
	// Open event streams keep connections busy: give the answers a
	// moment, then close what is left.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		logger.Warn("shutting down HTTP", "err", err)
	}
	_ = hs.Close()
	return nil
}
