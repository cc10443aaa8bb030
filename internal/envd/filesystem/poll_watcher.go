package filesystem

import (
	"context"
	"sync"
	"time"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/log"
)

const (
	// maxPending bounds the events a polling watcher keeps between polls;
	// past it the oldest are dropped, so an unpolled watcher cannot grow.
	maxPending = 10000
	// watcherIdle removes a polling watcher nobody has polled for this long:
	// a client that died without RemoveWatcher must not leak it forever.
	watcherIdle = time.Hour
)

// pollWatcher collects events for GetWatcherEvents.
type pollWatcher struct {
	w      *watcher
	cancel context.CancelFunc
	done   chan struct{}
	idle   *time.Timer

	mu sync.Mutex
	// pending and dropped are guarded by mu.
	pending []*pb.FilesystemEvent
	dropped int
}

func startPollWatcher(ctx context.Context, w *watcher, onIdle func()) *pollWatcher {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pw := &pollWatcher{w: w, cancel: cancel, done: make(chan struct{})}
	pw.idle = time.AfterFunc(watcherIdle, onIdle)
	go pw.collect(ctx)
	return pw
}

func (pw *pollWatcher) collect(ctx context.Context) {
	defer close(pw.done)
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-pw.w.fsw.Events:
			if !ok {
				return
			}
			pw.append(pw.w.convert(ctx, ev))
		case err, ok := <-pw.w.fsw.Errors:
			if !ok {
				return
			}
			log.G(ctx).Warn("watch error", "path", pw.w.root, "err", err)
		}
	}
}

func (pw *pollWatcher) append(evs []*pb.FilesystemEvent) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.pending = append(pw.pending, evs...)
	if over := len(pw.pending) - maxPending; over > 0 {
		pw.pending = append(pw.pending[:0:0], pw.pending[over:]...)
		pw.dropped += over
	}
}

// drain returns and forgets the events collected since the last call.
func (pw *pollWatcher) drain(ctx context.Context) []*pb.FilesystemEvent {
	pw.idle.Reset(watcherIdle)
	pw.mu.Lock()
	defer pw.mu.Unlock()
	evs := pw.pending
	pw.pending = nil
	if pw.dropped > 0 {
		log.G(ctx).Warn("watcher dropped events between polls", "path", pw.w.root, "dropped", pw.dropped)
		pw.dropped = 0
	}
	return evs
}

// stop ends collection and releases the inotify instance.
func (pw *pollWatcher) stop() {
	pw.idle.Stop()
	pw.cancel()
	<-pw.done
	pw.w.close()
}
