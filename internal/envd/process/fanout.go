package process

import (
	"sync"

	pb "github.com/warren-sandbox/warren/api/gen/process"
)

// subBuffer is how many events a subscriber may lag behind. Data events hold
// at most readChunk bytes, so a subscriber costs at most subBuffer*readChunk
// of memory however much the process prints.
const subBuffer = 32

// fanout delivers a process's events to its current subscribers. Delivery
// blocks until every subscriber has taken the event or gone away, so a slow
// client slows the process down (pipe backpressure) instead of growing
// envd's memory; with no subscribers, output is dropped.
type fanout struct {
	mu sync.Mutex
	// subs and end are guarded by mu. end is set once, when the process has
	// finished; later subscribers get only it.
	subs map[*subscription]struct{}
	end  *pb.ProcessEvent
}

// subscription is one attached client's view of a process's events. C is
// closed after the end event.
type subscription struct {
	C    chan *pb.ProcessEvent
	quit chan struct{}
	once sync.Once
	f    *fanout
}

func newFanout() *fanout {
	return &fanout{subs: map[*subscription]struct{}{}}
}

func (f *fanout) subscribe() *subscription {
	s := &subscription{C: make(chan *pb.ProcessEvent, subBuffer), quit: make(chan struct{}), f: f}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.end != nil {
		s.C <- f.end
		close(s.C)
		return s
	}
	f.subs[s] = struct{}{}
	return s
}

// Close detaches the subscription; pending and future events are dropped.
func (s *subscription) Close() {
	s.once.Do(func() {
		s.f.mu.Lock()
		delete(s.f.subs, s)
		s.f.mu.Unlock()
		close(s.quit)
	})
}

func (f *fanout) snapshot() []*subscription {
	f.mu.Lock()
	defer f.mu.Unlock()
	subs := make([]*subscription, 0, len(f.subs))
	for s := range f.subs {
		subs = append(subs, s)
	}
	return subs
}

func (f *fanout) hasSubscribers() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs) > 0
}

// publish hands ev to every current subscriber.
func (f *fanout) publish(ev *pb.ProcessEvent) {
	for _, s := range f.snapshot() {
		select {
		case s.C <- ev:
		case <-s.quit:
		}
	}
}

// finish records end, delivers it, and closes every subscriber's channel.
// It must be called once, after the last publish has returned.
func (f *fanout) finish(end *pb.ProcessEvent) {
	f.mu.Lock()
	f.end = end
	subs := make([]*subscription, 0, len(f.subs))
	for s := range f.subs {
		subs = append(subs, s)
	}
	f.subs = map[*subscription]struct{}{}
	f.mu.Unlock()
	for _, s := range subs {
		select {
		case s.C <- end:
		case <-s.quit:
		}
		close(s.C)
	}
}
