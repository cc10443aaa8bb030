package lifecycle

import (
	"context"
	"net"
	"net/netip"
	"sync"
	"testing"

	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// settling is a backend that settles connections (as runsc does) and
// records for which addresses it was asked to.
type settling struct {
	*fake.Backend
	mu  sync.Mutex
	ips []netip.Addr
}

func (s *settling) SettleClosed(_ context.Context, ip netip.Addr) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ips = append(s.ips, ip)
}

func (s *settling) asked() []netip.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]netip.Addr(nil), s.ips...)
}

// Before a pause or a snapshot the manager cuts the proxied connections
// into the sandbox and, only when it cut any, asks a settling backend to
// wait for the sandbox's ends.
func TestCutAsksTheBackendToSettle(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		open      bool // a proxied connection is open at the checkpoint
		op        func(e *env, id string) error
		wantAsked bool
	}{
		{name: "pause with a connection", open: true, op: pauseIt, wantAsked: true},
		{name: "snapshot with a connection", open: true, op: snapshotIt, wantAsked: true},
		{name: "pause with none", op: pauseIt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var s *settling
			e := newEnvWith(t, func(o *Options) {
				s = &settling{Backend: o.Backends["fake"].(*fake.Backend)}
				o.Backends = map[string]runtime.Backend{"fake": s}
			})
			sb := e.create(t, sandbox.CreateRequest{})
			if tc.open {
				target, err := e.m.Resolve(e.ctx, sb.ID)
				if err != nil {
					t.Fatal(err)
				}
				c1, c2 := net.Pipe()
				t.Cleanup(func() { c1.Close(); c2.Close() })
				target.Track(c1)
			}
			if err := tc.op(e, sb.ID); err != nil {
				t.Fatal(err)
			}
			asked := s.asked()
			if (len(asked) > 0) != tc.wantAsked {
				t.Fatalf("backend asked to settle for %v, want asked %v", asked, tc.wantAsked)
			}
			got, _ := e.m.Resolve(context.Background(), sb.ID)
			if tc.wantAsked && got != nil && asked[0] != got.IP {
				t.Errorf("settled %v, the sandbox is at %v", asked[0], got.IP)
			}
		})
	}
}

func pauseIt(e *env, id string) error { return e.m.Pause(e.ctx, id, true) }

func snapshotIt(e *env, id string) error {
	_, err := e.snaps.Snapshot(e.ctx, id, "")
	return err
}
