package lifecycle

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime/fake"
	"github.com/warren-sandbox/warren/internal/sandbox"
)

// TestSnapshotSurvivesCollection kills another sandbox while a snapshot's
// directory exists but is not yet recorded: the collector that kill starts
// must leave the unfinished snapshot alone, whether it is a named snapshot
// or a fork's.
func TestSnapshotSurvivesCollection(t *testing.T) {
	t.Parallel()
	ops := []struct {
		name string
		run  func(e *env, id string) error
	}{
		{"snapshot", func(e *env, id string) error {
			snap, err := e.snaps.Snapshot(e.ctx, id, "")
			if err == nil {
				_, err = os.Stat(filepath.Join(snap.Dir, "layer"))
			}
			return err
		}},
		{"fork", func(e *env, id string) error {
			forks, err := e.snaps.Fork(e.ctx, id, 1, time.Minute)
			if err == nil {
				err = forks[0].Err
			}
			return err
		}},
	}
	for _, op := range ops {
		t.Run(op.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			src := e.create(t, sandbox.CreateRequest{})
			// A snapshot directory must exist before the kill for the kill
			// to start a collection at all.
			if _, err := e.snaps.Snapshot(e.ctx, src.ID, "older"); err != nil {
				t.Fatal(err)
			}
			victim := e.create(t, sandbox.CreateRequest{})
			var once sync.Once
			e.b.SetHook(func(ctx context.Context, o fake.Op, id string) error {
				if o != fake.OpSnapshotWrite || id != src.ID {
					return nil
				}
				once.Do(func() {
					if err := e.m.Kill(ctx, victim.ID); err != nil {
						t.Errorf("killing the other sandbox: %v", err)
					}
					// Give a collector that does not wait time to do harm.
					time.Sleep(200 * time.Millisecond)
				})
				return nil
			})
			if err := op.run(e, src.ID); err != nil {
				t.Fatalf("%s while another sandbox was killed: %v", op.name, err)
			}
			if _, err := e.m.Get(e.ctx, src.ID); err != nil {
				t.Fatalf("the source is gone: %v", err)
			}
		})
	}
}
