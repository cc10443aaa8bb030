package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// waitFor polls cond until it holds or a few seconds pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestTurnsAreFairBetweenTeams: with one slot, a team that queued ten
// starts and a team that queued one afterwards take turns: the second
// team's start is the second to run, not the eleventh.
func TestTurnsAreFairBetweenTeams(t *testing.T) {
	q := New(Options{Slots: 1, MaxWait: time.Minute})
	held, err := q.Acquire(t.Context(), "create", "busy")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	start := func(team string, n int) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done, err := q.Acquire(t.Context(), "create", team)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, fmt.Sprintf("%s%d", team, n))
			mu.Unlock()
			done()
		}()
	}
	for i := range 10 {
		start("a", i)
		waitFor(t, "a's waiter", func() bool { return q.Stats().Waiting == i+1 })
	}
	start("b", 0)
	waitFor(t, "b's waiter", func() bool { return q.Stats().Waiting == 11 })
	held()
	wg.Wait()
	if len(order) != 11 || order[0] != "a0" || order[1] != "b0" || order[2] != "a1" || order[10] != "a9" {
		t.Fatalf("turns went %v; want a0 b0 a1 … a9", order)
	}
}

// TestRefusals: a start is refused (ErrResourceExhausted) only when it
// waited its bound (ErrWaitTimedOut, which is resource-exhausted too) or
// the queue is full, and a start whose request went
// away leaves the queue; none of them keeps a turn.
func TestRefusals(t *testing.T) {
	cases := []struct {
		name     string
		opts     Options
		ctx      func() (context.Context, context.CancelFunc)
		want     error
		outcome  func(Stats) uint64
		minWait  time.Duration
		queueing int // waiters queued first, that must keep their place
	}{
		{
			name: "waited its bound", opts: Options{Slots: 1, MaxWait: 100 * time.Millisecond},
			want: errdefs.ErrWaitTimedOut, outcome: func(s Stats) uint64 { return s.TimedOut }, minWait: 100 * time.Millisecond,
		},
		{
			name: "queue full", opts: Options{Slots: 1, MaxWait: time.Minute, MaxQueue: 2}, queueing: 2,
			want: errdefs.ErrResourceExhausted, outcome: func(s Stats) uint64 { return s.Full },
		},
		{
			name: "request gone", opts: Options{Slots: 1, MaxWait: time.Minute},
			ctx: func() (context.Context, context.CancelFunc) {
				return context.WithTimeout(context.Background(), 50*time.Millisecond)
			},
			want: context.DeadlineExceeded, outcome: func(s Stats) uint64 { return s.Cancelled }, minWait: 50 * time.Millisecond,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			q := New(tc.opts)
			held, err := q.Acquire(t.Context(), "create", "x")
			if err != nil {
				t.Fatal(err)
			}
			bg, stop := context.WithCancel(t.Context())
			defer stop()
			for range tc.queueing {
				go func() {
					if done, err := q.Acquire(bg, "create", "x"); err == nil {
						done()
					}
				}()
			}
			waitFor(t, "the queued waiters", func() bool { return q.Stats().Waiting == tc.queueing })
			ctx, cancel := t.Context(), context.CancelFunc(func() {})
			if tc.ctx != nil {
				ctx, cancel = tc.ctx()
			}
			defer cancel()
			began := time.Now()
			_, err = q.Acquire(ctx, "create", "y")
			if !errors.Is(err, tc.want) {
				t.Fatalf("Acquire: %v, want %v", err, tc.want)
			}
			if took := time.Since(began); took < tc.minWait {
				t.Fatalf("refused after %v, before its bound %v", took, tc.minWait)
			}
			st := q.Stats()
			if tc.outcome(st) != 1 || st.Waiting != tc.queueing || st.Running != 1 {
				t.Fatalf("after the refusal: %+v", st)
			}
			stop()
			held()
			waitFor(t, "an empty queue", func() bool { s := q.Stats(); return s.Running == 0 && s.Waiting == 0 })
		})
	}
}

// TestPressureLimitsStartsToOne: while the sandboxes are short of CPU only
// one start runs at a time; once the pressure falls the slots come back.
func TestPressureLimitsStartsToOne(t *testing.T) {
	var pressure atomic.Int64
	pressure.Store(80)
	q := New(Options{Slots: 4, MaxWait: time.Minute, HighPressure: 50,
		Pressure: func() (float64, error) { return float64(pressure.Load()), nil }})
	first, err := q.Acquire(t.Context(), "create", "x")
	if err != nil {
		t.Fatal(err)
	}
	second := make(chan func(), 1)
	go func() {
		done, err := q.Acquire(t.Context(), "create", "x")
		if err != nil {
			t.Error(err)
		}
		second <- done
	}()
	waitFor(t, "the second start to wait", func() bool { return q.Stats().Waiting == 1 })
	if st := q.Stats(); st.Slots != 1 || st.Running != 1 {
		t.Fatalf("under pressure: %+v, want one slot, one running", st)
	}
	pressure.Store(10)
	// A third start queues behind the waiter, and both find the slots back.
	third, err := q.Acquire(t.Context(), "create", "x")
	if err != nil {
		t.Fatal(err)
	}
	(<-second)()
	third()
	first()
	if st := q.Stats(); st.Running != 0 || st.Waiting != 0 || st.Slots != 4 || st.Admitted != 2 {
		t.Fatalf("at the end: %+v", st)
	}
}

// TestReleaseOnce: ending a turn twice frees one turn, not two.
func TestReleaseOnce(t *testing.T) {
	q := New(Options{Slots: 1})
	a, _ := q.Acquire(t.Context(), "create", "x")
	a()
	a()
	if st := q.Stats(); st.Running != 0 {
		t.Fatalf("running %d after a double release", st.Running)
	}
}

// TestWaitsWhileTheQueueMoves: a start behind many others waits past
// MaxWait as long as turns keep ending (a burst of cold creates on a
// small machine), and is admitted, not refused; each turn here lasts a
// tenth of the bound.
func TestWaitsWhileTheQueueMoves(t *testing.T) {
	const bound, hold, n = 500 * time.Millisecond, 50 * time.Millisecond, 15
	q := New(Options{Slots: 1, MaxWait: bound})
	held, err := q.Acquire(t.Context(), "create", "x")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, n)
	for i := range n {
		go func() {
			done, err := q.Acquire(t.Context(), "create", "x")
			if err == nil {
				time.Sleep(hold)
				done()
			}
			errs <- err
		}()
		waitFor(t, "the waiter", func() bool { return q.Stats().Waiting == i+1 })
	}
	began := time.Now()
	held()
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("a start refused while the queue moved: %v", err)
		}
	}
	if took := time.Since(began); took < bound {
		t.Fatalf("the queue drained in %v, within the bound %v: nothing waited past it", took, bound)
	}
	if st := q.Stats(); st.TimedOut != 0 || st.Admitted != n {
		t.Fatalf("at the end: %+v", st)
	}
}
