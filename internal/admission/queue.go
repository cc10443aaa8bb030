// Package admission makes the work that brings a sandbox up on this
// machine (a cold create, a resume, a fork) wait its turn while the
// machine is busy, instead of refusing it. A busy minute makes such work
// slower, not failed: it is refused only when the queue has not moved
// (no turn ended or began) for its whole bound, so the work could not be
// done, or when the queue itself is full. While turns keep coming it
// waits as long as its request does (a burst of cold creates on a small
// machine takes a few turns' time; the SDKs give a request 60 s).
//
// The queue runs a few starts at once (Options.Slots, two per CPU by
// default) and only one while warren's own sandboxes are short of CPU
// (Options.Pressure, the CPU pressure of their cgroups, not of the whole
// host): a boot then takes its turn after the sandboxes already running.
// Waiting starts are served round-robin between teams, oldest first
// within a team, so one team's burst cannot starve another's single
// create.
package admission

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Defaults of Options.
const (
	DefaultMaxWait      = 30 * time.Second
	DefaultMaxQueue     = 1024
	DefaultHighPressure = 50
)

// Options configure a Queue; zero values take the defaults.
type Options struct {
	// Slots is how many starts run at once while the sandboxes have the
	// CPU they want (default: twice the host's CPUs, since a boot spends
	// part of its time waiting on the disk and on its own processes).
	Slots int
	// MaxWait bounds how long a start waits for its turn while the queue
	// does not move (no turn ends or begins); a request's own deadline
	// bounds the wait in all.
	MaxWait time.Duration
	// MaxQueue bounds how many starts wait at once; past it a start is
	// refused without waiting.
	MaxQueue int
	// Pressure reports how much warren's sandboxes waited for a CPU
	// lately (PSI "some" avg10 of their cgroup, %); nil when unknown,
	// and then Slots always apply.
	Pressure func() (float64, error)
	// HighPressure is the Pressure at which starts run one at a time.
	HighPressure float64
	// Observe, when set, is told of every start that had to wait, or was
	// refused, and how long it waited.
	Observe func(op string, waited time.Duration, outcome Outcome)
}

// Outcome is how a wait ended.
type Outcome string

// The outcomes Observe is told of.
const (
	Admitted  Outcome = "admitted"  // its turn came
	TimedOut  Outcome = "timed_out" // the queue did not move for its whole bound: refused
	Full      Outcome = "full"      // the queue was full: refused at once
	Cancelled Outcome = "cancelled" // the request went away while waiting
)

// Queue admits starts; the zero value is not usable, use New.
type Queue struct {
	opts Options

	mu      sync.Mutex
	running int
	waiting int
	teams   map[string][]*waiter // each team's waiters, oldest first
	ring    []string             // teams with waiters, in serving order
	counts  map[Outcome]uint64
	waited  time.Duration // total wait of admitted starts that waited
	moved   time.Time     // when a turn last ended or began
}

type waiter struct {
	team    string
	since   time.Time
	ready   chan struct{}
	granted bool
}

// New returns a queue with opts, defaults filled in.
func New(opts Options) *Queue {
	if opts.Slots <= 0 {
		opts.Slots = 2 * runtime.NumCPU()
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = DefaultMaxQueue
	}
	if opts.HighPressure <= 0 {
		opts.HighPressure = DefaultHighPressure
	}
	return &Queue{opts: opts, teams: map[string][]*waiter{}, counts: map[Outcome]uint64{}}
}

// Acquire waits for a turn to run op (create, resume, fork) for team and
// returns the func that ends it. It fails with ErrResourceExhausted when
// the queue did not move for the bound or is full, and with the
// context's error when ctx ends first.
func (q *Queue) Acquire(ctx context.Context, op, team string) (release func(), err error) {
	q.mu.Lock()
	if q.waiting == 0 && q.running < q.slots() {
		q.running++
		q.mu.Unlock()
		return q.releaser(), nil
	}
	if q.waiting >= q.opts.MaxQueue {
		q.counts[Full]++
		q.mu.Unlock()
		q.observe(op, 0, Full)
		return nil, busy(fmt.Sprintf("the machine is busy: %d starts are already waiting for their turn, the most it queues; try again later", q.opts.MaxQueue))
	}
	w := &waiter{team: team, since: time.Now(), ready: make(chan struct{})}
	q.enqueue(w)
	q.mu.Unlock()

	outcome := q.await(ctx, w)
	waited := time.Since(w.since)
	q.mu.Lock()
	if outcome != Admitted && w.granted {
		outcome = Admitted // the turn came as the wait ended: take it
	}
	if outcome != Admitted {
		q.dequeue(w)
	} else {
		q.waited += waited
	}
	q.counts[outcome]++
	q.mu.Unlock()
	q.observe(op, waited, outcome)
	switch outcome {
	case Admitted:
		return q.releaser(), nil
	case Cancelled:
		return nil, fmt.Errorf("waiting for a turn to %s: %w", op, ctx.Err())
	}
	return nil, errdefs.New(errdefs.ErrWaitTimedOut, fmt.Sprintf("the machine is busy: this %s waited %s for its turn and no start ended for %s; try again later",
		op, waited.Round(time.Second), q.opts.MaxWait.Round(time.Second)))
}

// await waits for w's turn, ctx's end, or MaxWait without the queue
// moving.
func (q *Queue) await(ctx context.Context, w *waiter) Outcome {
	timer := time.NewTimer(q.opts.MaxWait)
	defer timer.Stop()
	for {
		select {
		case <-w.ready:
			return Admitted
		case <-ctx.Done():
			return Cancelled
		case <-timer.C:
		}
		q.mu.Lock()
		still := time.Since(maxTime(q.moved, w.since))
		q.mu.Unlock()
		if still >= q.opts.MaxWait {
			return TimedOut
		}
		timer.Reset(q.opts.MaxWait - still)
	}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// releaser returns the func that ends a turn, once however often called.
func (q *Queue) releaser() func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			q.running--
			q.moved = time.Now()
			q.dispatch()
		})
	}
}

// enqueue adds w behind its team's waiters; the caller holds mu.
func (q *Queue) enqueue(w *waiter) {
	if len(q.teams[w.team]) == 0 {
		q.ring = append(q.ring, w.team)
	}
	q.teams[w.team] = append(q.teams[w.team], w)
	q.waiting++
	// A turn may be free though others wait: the pressure fell since the
	// last release, say.
	q.dispatch()
}

// dequeue removes a waiter that gave up; the caller holds mu.
func (q *Queue) dequeue(w *waiter) {
	ws := q.teams[w.team]
	for i, x := range ws {
		if x == w {
			q.teams[w.team] = append(ws[:i:i], ws[i+1:]...)
			q.waiting--
			break
		}
	}
	if len(q.teams[w.team]) == 0 {
		q.dropTeam(w.team)
	}
}

// dispatch hands free turns to waiters, one team after another; the
// caller holds mu.
func (q *Queue) dispatch() {
	for q.waiting > 0 && q.running < q.slots() {
		team := q.ring[0]
		ws := q.teams[team]
		w := ws[0]
		q.teams[team] = ws[1:]
		q.ring = q.ring[1:]
		if len(q.teams[team]) > 0 {
			q.ring = append(q.ring, team) // its next waiter goes after the other teams'
		} else {
			delete(q.teams, team)
		}
		q.waiting--
		q.running++
		w.granted = true
		close(w.ready)
	}
}

func (q *Queue) dropTeam(team string) {
	delete(q.teams, team)
	for i, t := range q.ring {
		if t == team {
			q.ring = append(q.ring[:i:i], q.ring[i+1:]...)
			return
		}
	}
}

// slots is how many starts may run now: Slots, or one while the
// sandboxes are short of CPU.
func (q *Queue) slots() int {
	if q.opts.Pressure != nil {
		if p, err := q.opts.Pressure(); err == nil && p >= q.opts.HighPressure {
			return 1
		}
	}
	return q.opts.Slots
}

func (q *Queue) observe(op string, waited time.Duration, o Outcome) {
	if q.opts.Observe != nil {
		q.opts.Observe(op, waited, o)
	}
}

// busy is a refusal: the edge answers 503 with Retry-After.
func busy(msg string) error { return errdefs.New(errdefs.ErrResourceExhausted, msg) }
