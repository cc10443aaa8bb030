package lifecycle

import (
	"context"
	"errors"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/pidfd"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// watchInit notices when a running sandbox's init exits behind warren's
// back: the host's OOM killer ending a gVisor Sentry, a crash, a stray
// kill. pid is the init's host pid. Without it, streams through the proxy wait on a peer that will
// never answer (gVisor's network stack dies with the Sentry, so no reset
// comes) and the API keeps listing a corpse. Callers hold e.mu.
func (m *Manager) watchInit(ctx context.Context, e *entry, pid int) {
	if pid <= 0 || pid == e.initPid {
		return
	}
	fd, err := pidfd.Open(pid)
	if err != nil {
		if !errors.Is(err, unix.ESRCH) {
			log.G(ctx).Debug("cannot watch the sandbox's init", "sandbox", e.sb.ID, "pid", pid, "err", err)
			return
		}
		fd = -1 // already gone: check now
	}
	e.initPid = pid
	m.watchMemory(ctx, e)
	id := e.sb.ID
	// Like a timeout, this is not part of any request. The pidfd wait
	// itself cannot be cancelled: it stays parked in the poller until the
	// init exits, but the watch counted as the manager's work ends with
	// the base context.
	exited := make(chan struct{})
	go func() {
		if fd >= 0 {
			pidfd.Wait(fd)
		}
		close(exited)
	}()
	m.goBackground(func(ctx context.Context) {
		select {
		case <-ctx.Done():
		case <-exited:
			m.initExited(ctx, id, pid)
		}
	})
}

// initExited runs when the init warren watched is gone. An exit warren
// caused (pause to disk, a snapshot's restore, a kill) is not a death: the
// sandbox is then paused, killed, or running again under a new init.
func (m *Manager) initExited(ctx context.Context, id string, pid int) {
	if m.bg.done() {
		return
	}
	e, err := m.get(id)
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.killed || e.initPid != pid {
		return
	}
	e.initPid = 0 // a resume watches the next init
	if e.sb.State != store.SandboxRunning {
		return
	}
	inst, err := e.backend.Inspect(ctx, id)
	if err == nil && inst.State != runtime.StateStopped {
		// Restored under a new init (a snapshot). The backend's word wins
		// over the pidfd's; the same pid again is not watched twice.
		if inst.Pid != pid {
			m.watchInit(ctx, e, inst.Pid)
		}
		return
	}
	reason := "its init process exited"
	if err == nil && inst.OOMKilled {
		reason = "the host killed it for using more memory than its limit"
	}
	log.G(ctx).Warn("sandbox died; removing it", "sandbox", id, "reason", reason)
	if err := m.killLocked(ctx, e, sandbox.KillDied); err != nil {
		log.G(ctx).Error("removing dead sandbox", "sandbox", id, "err", err)
	}
}
