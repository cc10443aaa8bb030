package lifecycle

import (
	"context"
	"net/netip"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
)

// watchMemory forwards the backend's memory alerts for e's current
// processes to envd's OOM guard (POST /memory/check), which then looks at
// the sandbox's memory from inside and kills the largest process group if
// it is about to run out. Between alerts the guard sleeps: an idle sandbox
// costs no wake-ups. It ends by itself when the processes stop (the
// channel closes); a new init gets a new watch. Callers hold e.mu.
func (m *Manager) watchMemory(ctx context.Context, e *entry) {
	if !e.backend.Capabilities().MemoryAlerts || m.opts.PollOOMGuard {
		return
	}
	alerts, err := e.backend.MemoryAlerts(m.bg.ctx, e.sb.ID)
	if err != nil {
		log.G(ctx).Warn("no memory alerts for the sandbox; its OOM guard stays asleep", "sandbox", e.sb.ID, "err", err)
		return
	}
	url := "http://" + netip.AddrPortFrom(e.ip, m.opts.EnvdPort).String() + "/memory/check"
	token := e.sb.EnvdAccessToken
	m.goBackground(func(ctx context.Context) {
		// One nudge at a time: alerts that come meanwhile wait as one.
		for {
			select {
			case <-ctx.Done():
				return
			case _, ok := <-alerts:
				if !ok {
					return
				}
				m.nudgeGuard(ctx, url, token)
			}
		}
	})
}

// nudgeGuard asks envd's OOM guard to check memory now.
func (m *Manager) nudgeGuard(ctx context.Context, url, token string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if err := postEnvd(ctx, m.client, url, nil, token); err != nil {
		log.G(ctx).Debug("nudging the OOM guard", "url", url, "err", err)
	}
}
