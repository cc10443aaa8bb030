// Package envd is the in-sandbox agent's HTTP surface: the plain endpoints
// (/health, /init, /envs, /metrics, /files) and the process and filesystem
// Connect services, behind access-token auth and permissive CORS, exactly as
// E2B's SDKs expect to find them on port 49983.
package envd

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"connectrpc.com/connect"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/envd/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/process"
	"github.com/warren-sandbox/warren/internal/envd/reaper"
	"github.com/warren-sandbox/warren/internal/envd/state"
	"github.com/warren-sandbox/warren/internal/envd/users"
)

// DefaultPort is the port the SDKs reach envd on.
const DefaultPort = wire.EnvdPort

// Version is the envd API version this build implements; the server reports
// it to the SDKs as envdVersion, which gates features client-side.
const Version = "0.6.13"

// maxRPCMessage bounds one Connect request message (SendInput data, say).
const maxRPCMessage = 64 << 20

// Config configures a Server.
type Config struct {
	// Users is the account database; the zero value reads /etc/passwd and /etc/group.
	Users users.DB
	// Reaper starts and waits for child processes. Required; the caller runs it.
	Reaper *reaper.Reaper
	// ProcessRetention is how long exited processes stay known (0: the default).
	ProcessRetention time.Duration
	// Logger is the base logger for requests (nil: slog.Default()).
	Logger *slog.Logger
	// MemoryWake, when set, receives a value for each POST /memory/check:
	// the host asks the OOM guard to look (nil: the endpoint is 404).
	MemoryWake chan<- struct{}
	// RunDir is where each init writes the sandbox's and template's ids
	// (.E2B_SANDBOX_ID, .E2B_TEMPLATE_ID), as E2B's envd does in
	// /run/e2b ("": nowhere).
	RunDir string
}

// Validate reports a configuration that cannot work.
func (c Config) Validate() error {
	if c.Reaper == nil {
		return errors.New("envd config: Reaper is required")
	}
	if c.ProcessRetention < 0 {
		return errors.New("envd config: ProcessRetention must not be negative")
	}
	return nil
}

// Server is envd's HTTP handler and the services behind it.
type Server struct {
	st      *state.State
	procs   *process.Service
	fs      *filesystem.Service
	logger  *slog.Logger
	handler http.Handler
	memWake chan<- struct{}
	runDir  string
}

// New builds a Server from cfg.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	st := state.New(cfg.Users)
	var popts []process.Option
	if cfg.ProcessRetention > 0 {
		popts = append(popts, process.WithRetention(cfg.ProcessRetention))
	}
	s := &Server{st: st, procs: process.New(st, cfg.Reaper, popts...), fs: filesystem.New(st), logger: logger, memWake: cfg.MemoryWake, runDir: cfg.RunDir}
	s.handler = s.routes()
	return s, nil
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", s.health)
	mux.HandleFunc("POST /init", s.init)
	mux.HandleFunc("GET /envs", s.envs)
	mux.HandleFunc("GET /metrics", s.metrics)
	mux.HandleFunc("GET /files", s.download)
	mux.HandleFunc("POST /files", s.upload)
	if s.memWake != nil {
		mux.HandleFunc("POST /memory/check", s.memoryCheck)
	}
	opts := []connect.HandlerOption{connect.WithReadMaxBytes(maxRPCMessage)}
	mux.Handle(s.procs.Handler(opts...))
	mux.Handle(s.fs.Handler(opts...))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	return s.withLogging(withCORS(s.withToken(withoutZeroTimeout(mux))))
}

// Handler returns the HTTP handler serving every envd endpoint.
func (s *Server) Handler() http.Handler { return s.handler }

// State exposes the sandbox-wide settings, for the binary's startup wiring.
func (s *Server) State() *state.State { return s.st }

// Processes exposes the process service, for the binary's start command.
func (s *Server) Processes() *process.Service { return s.procs }

// Close kills running processes and stops polling watchers.
func (s *Server) Close(ctx context.Context) {
	s.procs.Close(ctx)
	s.fs.Close()
}
