package fake

import (
	"context"
	"fmt"
	"slices"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// WithMemoryAlerts makes the fake play runsc on a cgroup v1 host: a kernel
// of its own (envd gets its OOM guard) and memory alerts, which a test
// raises with AlertMemory.
func (b *Backend) WithMemoryAlerts() *Backend {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.memAlerts = true
	return b
}

// MemoryAlerts implements runtime.Backend: the channel receives what
// AlertMemory sends and is closed when the instance stops or goes.
func (b *Backend) MemoryAlerts(ctx context.Context, id string) (<-chan struct{}, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.memAlerts {
		return nil, fmt.Errorf("memory alerts: %w", errdefs.ErrNotImplemented)
	}
	if _, ok := b.instances[id]; !ok {
		return nil, fmt.Errorf("sandbox %s: %w", id, errdefs.ErrNotFound)
	}
	b.closeAlertsLocked(id)
	ch := make(chan struct{}, 1)
	b.alerts[id] = ch
	return ch, nil
}

// AlertMemory signals id's memory alert channel, as a crossed threshold
// would; it reports whether anyone listens.
func (b *Backend) AlertMemory(id string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch, ok := b.alerts[id]
	if ok {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
	return ok
}

func (b *Backend) closeAlertsLocked(id string) {
	if ch, ok := b.alerts[id]; ok {
		close(ch)
		delete(b.alerts, id)
	}
}

// InitArgs returns the arguments id's init was created with.
func (b *Backend) InitArgs(id string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if st, ok := b.instances[id]; ok {
		return slices.Clone(st.initArgs)
	}
	return nil
}
