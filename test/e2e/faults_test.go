package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestKillServerUnderLoad SIGKILLs `warren serve` while its sandboxes
// stream command output, take uploads, run short commands and pause, and
// starts it again on the same data dir. Every sandbox must then be either
// listed and usable (a command answers and the file it was given is
// there; a paused one resumes first) or gone with a reason (404, not
// listed, and a killed event saying why), and the host must hold exactly
// what the live ones need: no mount, netns, veth, nftables entry, cgroup,
// loop device, process or state dir of a gone one. Killing the rest and a
// clean stop must leave the host as it was before the server started.
// WARREN_E2E_FAULT_SANDBOXES sets the number of sandboxes (100 on runc,
// 20 on runsc by default).
func TestKillServerUnderLoad(t *testing.T) {
	cfg := loadConfig(t)
	for _, tc := range []struct {
		rt       string
		n, index int
	}{
		{"runc", 100, 200},
		{"runsc", 20, 201},
	} {
		t.Run(tc.rt, func(t *testing.T) {
			if !slices.Contains(cfg.runtimes, tc.rt) {
				t.Skipf("%s is not in WARREN_E2E_RUNTIMES", tc.rt)
			}
			n := tc.n
			if v := os.Getenv("WARREN_E2E_FAULT_SANDBOXES"); v != "" {
				if _, err := fmt.Sscan(v, &n); err != nil || n < roles {
					t.Fatalf("WARREN_E2E_FAULT_SANDBOXES=%q: want a number of at least %d", v, roles)
				}
			}
			killUnderLoad(t, cfg, tc.rt, n, tc.index)
		})
	}
}

// faultArgs are the fault tests' server flags, past the usual ones: no
// code-interpreter template (not used).
func faultArgs(extra ...string) []string {
	return append([]string{"--code-interpreter=false"}, extra...)
}

// Each sandbox does one thing when the server dies, by its index mod 4.
const (
	roleStream = iota // a long command streaming a line every 100 ms
	roleUpload        // uploads of 256 KiB, one after another
	rolePause         // paused before, or a pause sent just before the kill
	roleRun           // short commands, one after another
	roles
)

var roleNames = [roles]string{"stream", "upload", "pause", "run"}

func killUnderLoad(t *testing.T, cfg config, rt string, n, index int) {
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel()
	o := serverOpts{index: index, runtime: rt, dataDir: t.TempDir(), apiKey: newAPIKey(t), args: faultArgs()}
	bridge := fmt.Sprintf("we2e%d", index)
	s := launchServer(t, cfg, o)
	c := goClient(t, cfg, s)

	start := time.Now()
	sbs := createKept(ctx, t, c, n)
	t.Logf("%d %s sandboxes created in %v", n, rt, time.Since(start).Round(time.Millisecond))
	ids := make([]string, n)
	for i, sb := range sbs {
		ids[i] = sb.ID
	}
	// Half the pause role is paused before the load, the other half is
	// sent its pause in the last second before the kill.
	l := &load{}
	l.pause(ctx, c, sbs, 0, 0)
	l.wg.Wait()
	l.start(ctx, sbs)
	l.waitStreaming(t, (n+roles-1)/roles, time.Minute)
	time.Sleep(time.Second) // streams flow, uploads and commands go on
	l.pause(ctx, c, sbs, 1, time.Second)
	time.Sleep(700 * time.Millisecond) // some pauses done, some on their way
	sigkill(t, s)
	if !l.wait(30 * time.Second) {
		t.Fatal("clients of the killed server still waiting 30 s after the kill")
	}
	t.Logf("before the kill: %d lines streamed, %d uploads, %d commands, %d pauses answered",
		l.lines.Load(), l.uploads.Load(), l.runs.Load(), l.paused.Load())

	s2 := launchServer(t, cfg, o)
	c2 := goClient(t, cfg, s2)
	// Whatever fails below, nothing is left running: the server's own
	// cleanup kills only a first page of sandboxes.
	t.Cleanup(func() {
		select {
		case <-s2.exited: // stopped below, every sandbox killed
		default:
			killAllOf(context.Background(), t, c2, ids)
		}
	})
	ctx2, cancel2 := context.WithTimeout(t.Context(), 150*time.Second)
	defer cancel2()
	live, gone := checkAfterRestart(ctx2, t, c2, ids)
	t.Logf("after the restart: %d usable, %d gone (%v)", len(live), len(gone), gone)
	checkHostHolds(t, s2, rt, bridge, live, gone)

	killAllOf(ctx2, t, c2, live)
	s2.stop(t)
	checkHostHolds(t, s2, rt, bridge, nil, ids)
	checkServerGone(t, s2, bridge)
}

// killAllOf kills the sandboxes ids, eight at a time; those already gone
// are fine.
func killAllOf(ctx context.Context, t *testing.T, c *warren.Client, ids []string) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	parallel(ids, func(_ int, id string) {
		var apiErr *warren.APIError
		if err := c.Kill(ctx, id); err != nil && !(errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound) {
			t.Errorf("kill %s: %v", id, err)
		}
	})
}

// parallel calls f for each of items, eight at a time.
func parallel[T any](items []T, f func(int, T)) {
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, it := range items {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			f(i, it)
		}()
	}
	wg.Wait()
}

// createKept creates n sandboxes, eight at a time, each with a file
// naming it. A busy host's 503 is retried, as a patient client would.
func createKept(ctx context.Context, t *testing.T, c *warren.Client, n int) []*warren.Sandbox {
	t.Helper()
	sbs := make([]*warren.Sandbox, n)
	var failed atomic.Int32
	parallel(sbs, func(i int, _ *warren.Sandbox) {
		sb, err := createRetrying(ctx, c)
		if err == nil {
			_, err = sb.Files.Write(ctx, "/home/user/kept.txt", []byte("kept "+sb.ID), warren.FileOptions{})
		}
		if err != nil {
			if failed.Add(1) <= 3 {
				t.Errorf("sandbox %d: %v", i, err)
			}
			return
		}
		sbs[i] = sb
	})
	if failed.Load() > 0 {
		t.Fatalf("%d of %d creates failed", failed.Load(), n)
	}
	return sbs
}

func createRetrying(ctx context.Context, c *warren.Client) (*warren.Sandbox, error) {
	for {
		sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 10 * time.Minute})
		var apiErr *warren.APIError
		if !errors.As(err, &apiErr) || apiErr.Status != http.StatusServiceUnavailable {
			return sb, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(time.Second):
		}
	}
}

// load is the clients' work on the sandboxes while the server dies.
type load struct {
	wg                           sync.WaitGroup
	lines, uploads, runs, paused atomic.Int64
	streaming                    atomic.Int64 // streams that sent a line
}

// waitStreaming waits until n streams have sent output, for at most d.
func (l *load) waitStreaming(t *testing.T, n int, d time.Duration) {
	t.Helper()
	for end := time.Now().Add(d); l.streaming.Load() < int64(n); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%d of %d command streams sent output within %v", l.streaming.Load(), n, d)
		}
	}
}

// start starts the stream, upload and run roles; each ends with its
// first error (the server's death).
func (l *load) start(ctx context.Context, sbs []*warren.Sandbox) {
	blob := []byte(strings.Repeat("u", 256<<10))
	for i, sb := range sbs {
		var work func() error
		switch i % roles {
		case roleStream:
			work = func() error {
				var started sync.Once
				_, err := sb.Commands.Run(ctx, "for i in $(seq 1 3000); do echo line-$i; sleep 0.1; done", warren.CommandOptions{
					Timeout: 5 * time.Minute, MaxOutput: 1 << 16,
					OnStdout: func(b []byte) {
						started.Do(func() { l.streaming.Add(1) })
						l.lines.Add(int64(strings.Count(string(b), "\n")))
					},
				})
				return err
			}
		case roleUpload:
			work = func() error {
				_, err := sb.Files.Write(ctx, "/home/user/upload.bin", blob, warren.FileOptions{})
				l.uploads.Add(1)
				return err
			}
		case roleRun:
			work = func() error {
				_, err := sb.Commands.Run(ctx, "echo ok", warren.CommandOptions{})
				l.runs.Add(1)
				return err
			}
		default:
			continue
		}
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil && work() == nil {
			}
		}()
	}
}

// pause sends the pauses of every other sandbox of the pause role, from
// the first (half 0) or the second (half 1), spread over d.
func (l *load) pause(ctx context.Context, c *warren.Client, sbs []*warren.Sandbox, half int, d time.Duration) {
	var pausers []*warren.Sandbox
	for i, sb := range sbs {
		if i%roles == rolePause && (i/roles)%2 == half {
			pausers = append(pausers, sb)
		}
	}
	for k, sb := range pausers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			time.Sleep(d * time.Duration(k) / time.Duration(len(pausers)))
			if c.Pause(ctx, sb.ID, true) == nil {
				l.paused.Add(1)
			}
		}()
	}
}

// wait reports whether every client ended within d.
func (l *load) wait(d time.Duration) bool {
	done := make(chan struct{})
	go func() { l.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// checkAfterRestart sorts ids into the usable and the gone, failing t for
// any that is neither: listed but not answering, or gone without a reason.
// Only a sandbox of the pause role may be gone: the others' processes
// never stopped.
func checkAfterRestart(ctx context.Context, t *testing.T, c *warren.Client, ids []string) (live, gone []string) {
	t.Helper()
	listed := listAll(ctx, t, c)
	states := map[string]int{}
	for _, st := range listed {
		states[st]++
	}
	t.Logf("listed after the restart: %v", states)
	var mu sync.Mutex
	parallel(ids, func(i int, id string) {
		role := roleNames[i%roles]
		info, err := c.Info(ctx, id)
		var apiErr *warren.APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.Status == http.StatusNotFound:
			mu.Lock()
			gone = append(gone, id)
			mu.Unlock()
			if listed[id] != "" {
				t.Errorf("%s (%s) is 404 but listed %s", id, role, listed[id])
			}
			if i%roles != rolePause {
				t.Errorf("%s (%s) is gone after the restart", id, role)
			}
			wantKilledReason(ctx, t, c, id)
			return
		case err != nil:
			t.Errorf("GET %s after the restart: %v", id, err)
			return
		case listed[id] != info.State:
			t.Errorf("%s is %s but listed as %q", id, info.State, listed[id])
		}
		mu.Lock()
		live = append(live, id)
		mu.Unlock()
		if !usable(ctx, t, c, id, info.State) {
			t.Errorf("%s (%s, %s after the restart) is not usable", id, role, info.State)
		}
	})
	if len(listed) != len(live) {
		t.Errorf("listed after the restart: %d sandboxes, %d usable", len(listed), len(live))
	}
	return live, gone
}

// listAll lists every sandbox's state by id, page by page.
func listAll(ctx context.Context, t *testing.T, c *warren.Client) map[string]string {
	t.Helper()
	out := map[string]string{}
	next := ""
	for range 100 {
		page, tok, err := c.List(ctx, warren.ListOptions{NextToken: next})
		if err != nil {
			t.Fatalf("list after the restart: %v", err)
		}
		for _, info := range page {
			out[info.ID] = info.State
		}
		if next = tok; next == "" {
			break
		}
	}
	return out
}

// usable resumes a paused sandbox, then checks that a command answers
// with the file the sandbox was given.
func usable(ctx context.Context, t *testing.T, c *warren.Client, id, state string) bool {
	t.Helper()
	sb, err := c.Connect(ctx, id, 5*time.Minute)
	if err != nil {
		t.Logf("connect %s (%s): %v", id, state, err)
		return false
	}
	res, err := sb.Commands.Run(ctx, "cat /home/user/kept.txt", warren.CommandOptions{Timeout: 30 * time.Second})
	if err != nil || res.Stdout != "kept "+id {
		t.Logf("%s: cat kept.txt = %+v, %v", id, res, err)
		return false
	}
	return true
}

// wantKilledReason fails t unless the sandbox's events end with a killed
// event that gives a reason.
func wantKilledReason(ctx context.Context, t *testing.T, c *warren.Client, id string) {
	t.Helper()
	evs, err := c.SandboxEvents(ctx, id, warren.EventOptions{Types: []string{warren.EventKilled}})
	if err != nil {
		t.Errorf("events of %s: %v", id, err)
		return
	}
	if len(evs) == 0 || evs[0].Data["reason"] == nil || evs[0].Data["reason"] == "" {
		t.Errorf("gone sandbox %s has no killed event with a reason: %+v", id, evs)
		return
	}
	t.Logf("%s gone: %v", id, evs[0].Data["reason"])
}
