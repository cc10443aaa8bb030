package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// faultLoad is clients working through the API role while a fault
// happens: each creates a sandbox, runs a command in it and kills it,
// over and over, and notes what every call got.
type faultLoad struct {
	stop chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	created  map[string]string // sandbox id -> the create (op) that made it
	pending  map[string]*warren.Sandbox
	refused  int      // creates answered 503 with Retry-After
	failures []string // calls that failed in a way no fault excuses
	errs     []timedErr
	ops      int
	probes   int
}

// timedErr is a call that failed, and when it started and ended:
// failures are excused only while the store is out.
type timedErr struct {
	start, end time.Time
	msg        string
}

// faultCallTimeout is how long a call may take before it counts as a
// hang: well past any bound the server keeps.
const faultCallTimeout = 60 * time.Second

// startFaultLoad starts workers clients on api's URL, and one more that
// runs commands in each of probes, sandboxes made before the fault.
func startFaultLoad(t *testing.T, cfg config, api *server, workers int, probes []*warren.Sandbox) *faultLoad {
	l := &faultLoad{stop: make(chan struct{}), created: map[string]string{}, pending: map[string]*warren.Sandbox{}}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		for n := 0; ; n++ {
			select {
			case <-l.stop:
				return
			case <-time.After(300 * time.Millisecond):
			}
			l.probe(probes[n%len(probes)], fmt.Sprintf("probe-%d", n))
		}
	}()
	for w := range workers {
		rec := &createRecorder{RoundTripper: http.DefaultTransport}
		c, err := warren.New(warren.Config{APIURL: api.url, APIKey: api.apiKey, SandboxURL: api.url, Domain: cfg.domain,
			HTTPClient: &http.Client{Transport: rec}})
		if err != nil {
			t.Fatal(err)
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for n := 0; ; n++ {
				select {
				case <-l.stop:
					return
				default:
				}
				l.cycle(c, rec, fmt.Sprintf("w%d-%d", w, n))
			}
		}()
	}
	t.Cleanup(l.finish)
	return l
}

// finish stops the workers and waits for their last calls.
func (l *faultLoad) finish() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// cycle is one create, command and kill; a sandbox whose command or kill
// failed stays pending, for the test to check once the fault is over.
func (l *faultLoad) cycle(c *warren.Client, rec *createRecorder, op string) {
	ctx, cancel := context.WithTimeout(context.Background(), faultCallTimeout)
	defer cancel()
	start := time.Now()
	sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute, Metadata: map[string]string{"op": op}})
	l.mu.Lock()
	l.ops++
	l.mu.Unlock()
	if err != nil {
		status, retry := rec.last()
		var ae *warren.APIError
		switch {
		case errors.As(err, &ae) && ae.Status == http.StatusServiceUnavailable && retry != "":
			l.note(start, "create "+op+": "+err.Error(), "")
			l.mu.Lock()
			l.refused++
			l.mu.Unlock()
		default:
			l.note(start, "", fmt.Sprintf("create %s: %v (status %d, Retry-After %q): want success or 503 with Retry-After",
				op, err, status, retry))
		}
		time.Sleep(200 * time.Millisecond)
		return
	}
	l.mu.Lock()
	l.created[sb.ID], l.pending[sb.ID] = op, sb
	l.mu.Unlock()
	start = time.Now()
	if res, err := sb.Commands.Run(ctx, "echo "+op, warren.CommandOptions{}); err != nil || strings.TrimSpace(res.Stdout) != op {
		l.note(start, fmt.Sprintf("command in %s: %+v, %v", sb.ID, res, err), "")
		return
	}
	start = time.Now()
	if err := sb.Kill(ctx); err != nil {
		l.note(start, fmt.Sprintf("kill of %s: %v", sb.ID, err), "")
		return
	}
	l.mu.Lock()
	delete(l.pending, sb.ID)
	l.mu.Unlock()
}

// probe runs a command in sb, made before the fault.
func (l *faultLoad) probe(sb *warren.Sandbox, word string) {
	ctx, cancel := context.WithTimeout(context.Background(), faultCallTimeout)
	defer cancel()
	start := time.Now()
	res, err := sb.Commands.Run(ctx, "echo "+word, warren.CommandOptions{})
	l.mu.Lock()
	l.probes++
	l.mu.Unlock()
	if err != nil || strings.TrimSpace(res.Stdout) != word {
		l.note(start, "", fmt.Sprintf("command in %s (made before) at %s: %+v, %v: want it answered, store or not",
			sb.ID, start.Format("15:04:05.000"), res, err))
	}
}

// note records an excusable error (excused) or a failure.
func (l *faultLoad) note(at time.Time, excused, failure string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if failure != "" {
		l.failures = append(l.failures, failure)
	} else {
		l.errs = append(l.errs, timedErr{start: at, end: time.Now(), msg: excused})
	}
}

// check fails t for every failure, and for every error of a call that
// ended before from or started after to, when the store was up.
func (l *faultLoad) check(t *testing.T, from, to time.Time) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.failures {
		t.Error(f)
	}
	for _, e := range l.errs {
		if e.end.Before(from) || e.start.After(to) {
			t.Errorf("with the store up (%s to %s): %s", e.start.Format("15:04:05.000"), e.end.Format("15:04:05.000"), e.msg)
		}
	}
	t.Logf("load: %d cycles, %d creates refused with 503 and Retry-After, %d commands in older sandboxes, %d calls failed during the outage, %d sandboxes left to check",
		l.ops, l.refused, l.probes, len(l.errs), len(l.pending))
	for i, e := range l.errs {
		if i < 3 || i == len(l.errs)-1 {
			t.Logf("during the outage: %s", e.msg)
		}
	}
}

// createRecorder keeps the status and Retry-After of the last create a
// worker made (each worker has its own and makes one call at a time).
type createRecorder struct {
	http.RoundTripper
	mu         sync.Mutex
	status     int
	retryAfter string
}

func (r *createRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.RoundTripper.RoundTrip(req)
	if req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/sandboxes") {
		r.mu.Lock()
		r.status, r.retryAfter = 0, ""
		if err == nil {
			r.status, r.retryAfter = res.StatusCode, res.Header.Get("Retry-After")
		}
		r.mu.Unlock()
	}
	return res, err
}

func (r *createRecorder) last() (int, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status, r.retryAfter
}
