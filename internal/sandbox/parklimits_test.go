package sandbox

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/overlay"
	"github.com/warren-sandbox/warren/internal/store"
)

// updateHookStore calls onUpdate before the first UpdateSandbox that
// records the kill intent.
type updateHookStore struct {
	store.Store
	once     sync.Once
	onUpdate func()
}

func (s *updateHookStore) UpdateSandbox(ctx context.Context, sb *store.Sandbox) error {
	if sb.Intent == store.IntentKilling {
		s.once.Do(func() {
			if s.onUpdate != nil {
				s.onUpdate()
			}
		})
	}
	return s.Store.UpdateSandbox(ctx, sb)
}

// TestKillWindowBeforeIntent: a take-over (a request, the sweep) while a
// kill writes its intent finds the sandbox still live and does nothing;
// nothing outlives the kill.
func TestKillWindowBeforeIntent(t *testing.T) {
	t.Parallel()
	hs := &updateHookStore{}
	e := newEnvWith(t, func(o *Options) {
		o.NodeName, o.SharedDir = "a", t.TempDir()
		hs.Store = o.Store
		o.Store = hs
	})
	sb := e.create(t, CreateRequest{})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	waitParked(t, e.st, sb.ID)
	var takeErr error
	// A concurrent request (getOrTakeOver) or the heartbeat's sweep.
	hs.onUpdate = func() { takeErr = e.m.takeOver(e.ctx, sb.ID) }
	if err := e.m.Kill(e.ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	if takeErr != nil && !errdefs.IsNotFound(takeErr) {
		t.Errorf("take-over during the kill (before its intent is written): %v, want nothing done", takeErr)
	}
	if _, err := e.m.get(sb.ID); err == nil {
		t.Errorf("sandbox live after its kill")
	}
	if n := e.instances(t); n != 0 {
		t.Errorf("%d instances after the kill", n)
	}
}

// TestParkTooManyLayers: a sandbox on overlay.MaxLayers lowers, which no
// node could rebuild (its top becomes one more layer), is not parked: it
// waits for its own node instead of being handed over to die.
func TestParkTooManyLayers(t *testing.T) {
	t.Parallel()
	e, _, _, _ := twoNodes(t)
	layers := make([]string, overlay.MaxLayers)
	for i := range layers {
		layers[i] = fmt.Sprintf("%s/l%d", e.rootfs, i)
	}
	if err := e.st.PutTemplate(e.ctx, &store.Template{ID: "deep", RootfsPath: e.rootfs, Layers: layers}); err != nil {
		t.Fatal(err)
	}
	sb := e.create(t, CreateRequest{TemplateID: "deep"})
	if err := e.m.Pause(e.ctx, sb.ID, true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if rec, _ := e.st.GetSandbox(e.ctx, sb.ID); rec.Parked {
		t.Fatalf("a sandbox no node can rebuild is recorded parked (the reaper hands it over; it can then only be killed)")
	}
}
