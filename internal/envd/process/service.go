// Package process implements envd's process.Process Connect service: it
// starts commands as sandbox users (optionally on a PTY), streams their
// output to any number of attached clients through bounded buffers, and keeps
// each process alive independently of the RPC that started it.
//
// Each RPC lives in its own file; the process record is in proc.go, process
// creation in spawn.go and the output fan-out in fanout.go.
package process

import (
	"context"
	"net/http"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
	"github.com/warren-sandbox/warren/internal/envd/reaper"
	"github.com/warren-sandbox/warren/internal/envd/state"
	"github.com/warren-sandbox/warren/internal/log"
)

// DefaultRetention is how long an exited process stays known, so that a
// client reconnecting after the end still gets its end event.
const DefaultRetention = 5 * time.Minute

// Service implements processconnect.ProcessHandler.
type Service struct {
	st        *state.State
	reaper    *reaper.Reaper
	procs     *table
	retention time.Duration
}

var _ processconnect.ProcessHandler = (*Service)(nil)

// Option configures a Service.
type Option func(*Service)

// WithRetention sets how long exited processes stay known.
func WithRetention(d time.Duration) Option {
	return func(s *Service) { s.retention = d }
}

// New returns a Service that reads settings from st and starts children
// through r, which the caller must be running.
func New(st *state.State, r *reaper.Reaper, opts ...Option) *Service {
	s := &Service{st: st, reaper: r, procs: newTable(), retention: DefaultRetention}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Handler returns the route prefix and HTTP handler serving the service.
func (s *Service) Handler(opts ...connect.HandlerOption) (string, http.Handler) {
	return processconnect.NewProcessHandler(s, opts...)
}

// Close kills every running process group and waits, until ctx ends, for
// their exits to be reaped and their records finished.
func (s *Service) Close(ctx context.Context) {
	running := s.procs.running()
	for _, p := range running {
		_ = s.reaper.Signal(p.pid, syscall.SIGKILL, true)
	}
	if len(running) == 0 {
		return
	}
	log.G(ctx).Info("killing running processes", "count", len(running))
	s.reaper.Poke()
	for _, p := range running {
		select {
		case <-p.done:
		case <-ctx.Done():
			return
		}
	}
}
