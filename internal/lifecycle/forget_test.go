package lifecycle

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// outStore is a store whose sandbox writes fail as unreachable while
// down, after doing them when committed is set (a commit whose answer
// was lost with the connection).
type outStore struct {
	store.Store
	down, committed atomic.Bool
}

func (s *outStore) fail() error { return fmt.Errorf("store: %w", errdefs.ErrUnavailable) }

func (s *outStore) CreateSandbox(ctx context.Context, sb *store.Sandbox) error {
	if !s.down.Load() {
		return s.Store.CreateSandbox(ctx, sb)
	}
	if s.committed.Load() {
		_ = s.Store.CreateSandbox(ctx, sb)
	}
	return s.fail()
}

func (s *outStore) DeleteSandbox(ctx context.Context, id string) error {
	if s.down.Load() {
		return s.fail()
	}
	return s.Store.DeleteSandbox(ctx, id)
}

// TestStoreOutDuringKillAndCreate: a kill while the store cannot be
// reached destroys the sandbox, succeeds, and deletes the record (with
// the killed event) once the store is back; a create that fails so is
// destroyed, and a record it may have committed is deleted too. Neither
// leaves a record listed as running with nothing behind it.
func TestStoreOutDuringKillAndCreate(t *testing.T) {
	t.Parallel()
	for _, committed := range []bool{false, true} {
		t.Run(fmt.Sprintf("create committed %v", committed), func(t *testing.T) {
			l := &eventLog{}
			st := &outStore{}
			e := newEnvWith(t, func(o *Options) {
				st.Store = o.Store
				o.Store = st
				withEvents(l)(o)
			})
			killed := e.create(t, sandbox.CreateRequest{})
			st.down.Store(true)
			st.committed.Store(committed)
			if err := e.m.Kill(e.ctx, killed.ID); err != nil {
				t.Fatalf("kill with the store out: %v", err)
			}
			_, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "base"})
			if !errors.Is(err, errdefs.ErrUnavailable) {
				t.Fatalf("create with the store out: %v, want unavailable", err)
			}
			if left, err := e.b.List(e.ctx); err != nil || len(left) != 0 {
				t.Errorf("sandboxes running after the kill and the failed create: %d, %v", len(left), err)
			}
			st.down.Store(false)
			testutil.Eventually(t, 10*time.Second, func() error {
				sbs, err := st.ListSandboxes(e.ctx)
				if err != nil || len(sbs) != 0 {
					return fmt.Errorf("records %d, %v: want none", len(sbs), err)
				}
				if got := l.of(killed.ID); len(got) == 0 || got[len(got)-1] != store.EventKilled+":"+sandbox.KillRequested {
					return fmt.Errorf("events of the killed sandbox %v, want killed last", got)
				}
				return nil
			})
		})
	}
}
