package lifecycle

import (
	"errors"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// TestTrafficNeverReboots: traffic resumes an autoResume sandbox only when
// its memory was kept; one paused without it waits for an explicit
// connect, which boots it from its disk.
func TestTrafficNeverReboots(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name       string
		keepMemory bool
		noMemoryOK bool // backend that cannot checkpoint: memory is kept by freezing
		resumes    bool
	}{
		{"paused with memory", true, false, true},
		{"paused with memory, frozen (runc)", true, true, true},
		{"paused without memory", false, false, false},
		{"paused without memory (runc)", false, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWith(t, func(o *Options) { o.CheckpointAfter = 0 })
			if tt.noMemoryOK {
				e.b.WithoutCheckpoint()
			}
			sb := e.create(t, sandbox.CreateRequest{AutoPause: true, AutoResume: true})
			if err := e.m.Pause(e.ctx, sb.ID, tt.keepMemory); err != nil {
				t.Fatal(err)
			}
			_, err := e.m.Resolve(e.ctx, sb.ID)
			if tt.resumes != (err == nil) {
				t.Fatalf("traffic to a sandbox %s: %v; want resumed = %v", tt.name, err, tt.resumes)
			}
			if !tt.resumes && !errors.Is(err, errdefs.ErrUnavailable) {
				t.Fatalf("refusal = %v, want unavailable", err)
			}
			if cur, _ := e.m.Get(e.ctx, sb.ID); (cur.State == store.SandboxRunning) != tt.resumes {
				t.Fatalf("state after traffic: %s", cur.State)
			}
			if _, _, err := e.m.Connect(e.ctx, sb.ID, time.Minute, false); err != nil {
				t.Fatalf("an explicit connect: %v", err)
			}
		})
	}
}
