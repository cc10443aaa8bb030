package lifecycle

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/proxy"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// Resolve returns where to send traffic for a sandbox. A paused sandbox is
// resumed first when it was created with autoResume, otherwise it is
// reported unavailable.
func (m *Manager) Resolve(ctx context.Context, id string) (*proxy.Target, error) {
	e, err := m.getOrTakeOver(ctx, id)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sb.State == store.SandboxPaused {
		if !e.sb.AutoResume {
			return nil, errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("sandbox %q is paused", id))
		}
		// Traffic may come from anyone: it never reboots a sandbox that
		// was paused without its memory, which would lose its processes
		// behind its owner's back. Only an explicit connect does that.
		if inst, err := e.backend.Inspect(ctx, id); err != nil {
			return nil, fmt.Errorf("inspecting paused sandbox: %w", err)
		} else if inst.State == runtime.StateStopped && !inst.Checkpointed {
			return nil, errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("sandbox %q is paused without its memory: traffic does not resume it; resume it explicitly (connect)", id))
		}
		if err := m.resumeLocked(ctx, e, sandbox.NoTimeout, true); err != nil {
			return nil, err
		}
	}
	in := e.sb.Network.Ingress
	return &proxy.Target{
		ID:                 id,
		IP:                 e.ip,
		EnvdAccessToken:    e.sb.EnvdAccessToken,
		TrafficAccessToken: e.sb.TrafficAccessToken,
		MaskRequestHost:    in.MaskRequestHost,
		HTTPSPorts:         in.HTTPSPorts,
		Track:              e.conns.add,
	}, nil
}

// LiveTokens returns the envd token of every live, secured sandbox, for
// routing signed file URLs that carry no sandbox id.
func (m *Manager) LiveTokens() map[string]string {
	// Only the manager's own lock, held briefly: a token never changes
	// after create and running is atomic, so a signed URL never waits for
	// a sandbox busy pausing, snapshotting or being killed.
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]string, len(m.live))
	for id, e := range m.live {
		if e.sb.EnvdAccessToken != "" && e.running.Load() {
			out[id] = e.sb.EnvdAccessToken
		}
	}
	return out
}

// connSet tracks open proxied connections to one sandbox.
type connSet struct {
	mu    sync.Mutex
	conns map[net.Conn]struct{}
}

func newConnSet() *connSet { return &connSet{conns: make(map[net.Conn]struct{})} }

func (s *connSet) add(c net.Conn) func() {
	s.mu.Lock()
	s.conns[c] = struct{}{}
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}
}

// closeAll closes every tracked connection and reports how many there were.
func (s *connSet) closeAll() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.conns)
	for c := range s.conns {
		_ = c.Close()
	}
	clear(s.conns)
	return n
}

// cutForCheckpoint closes the sandbox's proxied connections and lets a
// backend that needs it wait for the sandbox to close its ends.
func (e *entry) cutForCheckpoint(ctx context.Context) {
	if e.conns.closeAll() == 0 {
		return
	}
	if s, ok := e.backend.(runtime.ConnSettler); ok {
		s.SettleClosed(ctx, e.ip)
	}
}
