// Package mcpserver is `warren mcp`: a Model Context Protocol server that
// gives agents sandboxes through the Go SDK (pkg/warren). Its tools run
// code, run commands, read, write and list files, and create and kill
// sandboxes. A call without a sandboxId uses the session's own sandbox,
// which the server creates on the session's first such call and kills when
// the session ends; a call with one connects to that sandbox.
//
// The server speaks MCP over stdio (Serve) or streamable HTTP (Handler),
// with the official Go MCP SDK. Over HTTP every request must carry a key,
// as the REST API's requests do.
package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// Defaults of Options.
const (
	DefaultTemplate       = "code-interpreter-v1"
	DefaultSandboxTimeout = time.Hour
)

// Options configure a Server; the zero value of a field takes its default.
type Options struct {
	// Template is what the session's sandbox is created from.
	Template string
	// SandboxTimeout is the session sandbox's lifetime, renewed while the
	// session uses it.
	SandboxTimeout time.Duration
	// Version is reported to clients as the server's version.
	Version string
	// Logger receives the server's log (default slog.Default()). Over
	// stdio it must not write to stdout.
	Logger *slog.Logger
}

// Server is one MCP server and the sandboxes of its sessions.
type Server struct {
	mcp      *mcp.Server
	client   *warren.Client
	sessions *sessions
	template string
	log      *slog.Logger

	// calls is the parent of every request's context: stopCalls cancels
	// the calls in flight, so that a shutdown need not wait for them.
	calls     context.Context
	stopCalls context.CancelFunc
}

// New returns a server whose tools use c.
func New(c *warren.Client, o Options) *Server {
	if o.Template == "" {
		o.Template = DefaultTemplate
	}
	if o.SandboxTimeout <= 0 {
		o.SandboxTimeout = DefaultSandboxTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &Server{client: c, template: o.Template, log: o.Logger,
		sessions: newSessions(c, o.Template, o.SandboxTimeout, o.Logger)}
	s.calls, s.stopCalls = context.WithCancel(context.Background())
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "warren", Title: "warren sandboxes", Version: o.Version},
		&mcp.ServerOptions{Instructions: instructions, Logger: quiet(o.Logger)})
	s.mcp.AddReceivingMiddleware(s.cancelOnStop)
	s.addCodeTools()
	s.addCommandTools()
	s.addFileTools()
	s.addSandboxTools()
	return s
}

// instructions tell the client's model how the tools fit together.
const instructions = `Tools to run code and commands in isolated sandboxes (E2B-compatible, self-hosted). ` +
	`Without a sandboxId, every tool uses this session's own sandbox: it is created on first use and ` +
	`killed when the session ends, and files and variables persist between calls. Pass a sandboxId ` +
	`(from create_sandbox) to work in another sandbox.`

// MCP returns the underlying MCP server, for transports of one's own.
func (s *Server) MCP() *mcp.Server { return s.mcp }

// cancelOnStop makes every request's context end when the server stops.
func (s *Server) cancelOnStop(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		defer context.AfterFunc(s.calls, cancel)()
		return next(ctx, method, req)
	}
}

// Serve speaks MCP over t (e.g. &mcp.StdioTransport{}) until the client
// disconnects or ctx ends (which cancels the calls in flight), then kills
// the sessions' sandboxes.
func (s *Server) Serve(ctx context.Context, t mcp.Transport) error {
	defer context.AfterFunc(ctx, s.stopCalls)()
	err := s.mcp.Run(ctx, t)
	s.Close()
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("serving MCP: %w", err)
	}
	return nil
}

// Close cancels the calls in flight, closes the sessions, kills their
// sandboxes and refuses new ones; it returns once they are killed.
func (s *Server) Close() {
	s.stopCalls()
	s.sessions.close()
	for ss := range s.mcp.Sessions() {
		_ = ss.Close()
	}
}

// quiet returns a logger for the MCP SDK that passes on only warnings and
// errors: the SDK logs every session's steps at info.
func quiet(l *slog.Logger) *slog.Logger { return slog.New(warnHandler{l.Handler()}) }

// warnHandler drops records below warn level.
type warnHandler struct{ slog.Handler }

func (h warnHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && h.Handler.Enabled(ctx, l)
}

func (h warnHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return warnHandler{h.Handler.WithAttrs(as)}
}

func (h warnHandler) WithGroup(name string) slog.Handler {
	return warnHandler{h.Handler.WithGroup(name)}
}
