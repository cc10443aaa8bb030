package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/selftest"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// Load test sizes: bounded so that the test takes well under a minute.
const (
	loadIdleConns = 2000 // half silent, half stalled in their headers
	loadStreams   = 200  // command streams, 3 s each, all at once
	loadDownloads = 400  // signed downloads, 20 at a time
)

// TestLoad puts one server under bounded load, on loopback only: idle and
// stalled connections by the thousand, hundreds of command streams and
// signed downloads (header-less, so found through the token index) on two
// sandboxes while a third snapshots in a loop. Every stream and download
// must complete, /health must keep answering, and once the load and its
// sandboxes are gone the server's goroutines and open files return to
// where they were before.
func TestLoad(t *testing.T) {
	cfg := loadConfig(t)
	s := launchServer(t, cfg, serverOpts{index: 110, runtime: cfg.runtimes[0], args: []string{"--idle-timeout=2s"}})
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	// No per-request cap short of the phase's own (runStream): a stream
	// slowed by the load must be let finish.
	c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{Timeout: 5 * time.Minute, Transport: tr}}
	ctx := t.Context()

	// Warm every path up once on a sandbox of its own, remove it and let
	// keep-alives expire: the baseline is the server with no sandbox.
	warm := newLoadSandbox(t, ctx, s, c)
	runStreams(t, ctx, []*loadSandbox{warm}, 2)
	runDownloads(t, s, tr, []*loadSandbox{warm}, 2, 1)
	for _, id := range snapshotLoop(t, s, warm, func() bool { return true }, 1) {
		s.mustCall(t, "DELETE", "/templates/"+id, "", http.StatusNoContent)
	}
	warm.Kill(ctx)
	tr.CloseIdleConnections()
	time.Sleep(3 * time.Second)
	base := serverStats(t, s)
	t.Logf("baseline: %+v", base)

	var workers []*loadSandbox
	for range 2 {
		workers = append(workers, newLoadSandbox(t, ctx, s, c))
	}
	snapped := newLoadSandbox(t, ctx, s, c)
	var snaps []string

	idle := openIdleConns(t, s, loadIdleConns)
	var done atomic.Bool
	health := make(chan []time.Duration, 1)
	go func() { health <- probeHealth(s, &done) }()
	snapDone := make(chan []string, 1)
	go func() { snapDone <- snapshotLoop(t, s, snapped, done.Load, 1000) }()
	start := time.Now()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); runStreams(t, ctx, workers, loadStreams) }()
	go func() { defer wg.Done(); runDownloads(t, s, tr, workers, loadDownloads, 20) }()
	wg.Wait()
	peak := serverStats(t, s)
	done.Store(true)
	snaps = append(snaps, <-snapDone...)
	lat := <-health
	t.Logf("load took %v with %d idle connections; at its end: %+v; %d snapshots; /health p50 %v, max %v over %d probes",
		time.Since(start).Round(time.Millisecond), len(idle), peak, len(snaps), percentile(lat, 50), percentile(lat, 100), len(lat))
	// The proxy keeps a few idle connections to each sandbox's envd; they
	// go with the sandbox.
	for _, conn := range idle {
		conn.Close()
	}
	for _, id := range snaps {
		s.mustCall(t, "DELETE", "/templates/"+id, "", http.StatusNoContent)
	}
	for _, sb := range append(workers, snapped) {
		sb.Kill(ctx)
	}
	tr.CloseIdleConnections()
	waitBaseline(t, s, base)
}

// loadSandbox is a secure sandbox with a file to download.
type loadSandbox struct {
	*selftest.Sandbox
	token string
	data  string
}

func newLoadSandbox(t *testing.T, ctx context.Context, s *server, c *selftest.Client) *loadSandbox {
	t.Helper()
	sb, err := c.Create(ctx, "base", nil) // the SDK's creates are secure
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Kill(context.Background()) })
	var info struct {
		EnvdAccessToken string `json:"envdAccessToken"`
	}
	if err := json.Unmarshal(s.mustCall(t, "GET", "/sandboxes/"+sb.ID, "", http.StatusOK), &info); err != nil || info.EnvdAccessToken == "" {
		t.Fatalf("no access token for a secure sandbox: %v", err)
	}
	ls := &loadSandbox{Sandbox: sb, token: info.EnvdAccessToken, data: strings.Repeat("warren load "+sb.ID+"\n", 2048)}
	if code, body, err := sb.Upload(ctx, "/home/user/data.txt", ls.data); err != nil || code != http.StatusOK {
		t.Fatalf("upload: %d %s %v", code, body, err)
	}
	return ls
}

// runStreams runs n 3-second commands at once, spread over the sandboxes,
// and fails t for any that does not stream all its output.
func runStreams(t *testing.T, ctx context.Context, sbs []*loadSandbox, n int) {
	var wg sync.WaitGroup
	var failed atomic.Int32
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := runStream(ctx, sbs[i%len(sbs)])
			if err != nil || res.ExitCode != 0 || strings.Count(res.Stdout, "line-") != 30 {
				if failed.Add(1) <= 3 {
					t.Errorf("command stream %d: %v, %s", i, err, res)
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Errorf("%d of %d command streams failed", f, n)
	}
}

// streamScript prints 30 lines 0.1 s apart without a process per line
// (bash's read times out on a FIFO it holds open itself): the streams
// load the server's proxy, not the sandbox's fork rate, which on a slow
// two-core machine made 200 of them take over a minute of CPU.
const streamScript = `f=$(mktemp -u); mkfifo "$f"; exec 3<>"$f"; rm "$f"
for i in $(seq 1 30); do echo line-$i; read -t 0.1 -u 3 || :; done`

// runStream runs streamScript in sb. Not under the SDK's default command
// timeout (60 s, E2B's, which kills the command and ends the stream with
// 504): a stream slowed by the load must stay open, and the test's own
// deadline bounds the whole phase instead.
func runStream(ctx context.Context, sb *loadSandbox) (selftest.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	h, err := sb.Commands.Exec(ctx, "/bin/bash", []string{"-c", streamScript}, warren.CommandOptions{User: "user", Timeout: warren.NoTimeout})
	if err != nil {
		return selftest.Result{}, err
	}
	res, err := h.Wait()
	if res == nil {
		return selftest.Result{}, err
	}
	return selftest.Result{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr}, err
}

// runDownloads fetches each sandbox's file n times in all, par at once,
// by signed URLs without any sandbox header.
func runDownloads(t *testing.T, s *server, tr *http.Transport, sbs []*loadSandbox, n, par int) {
	client := &http.Client{Timeout: time.Minute, Transport: tr}
	var next, failed atomic.Int32
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)); i <= n; i = int(next.Add(1)) {
				sb := sbs[i%len(sbs)]
				const path = "/home/user/data.txt"
				sig := wire.SignFileURL(path, "read", "user", sb.token, "")
				res, err := client.Get(s.url + "/files?path=" + url.QueryEscape(path) + "&username=user&signature=" + url.QueryEscape(sig))
				var body []byte
				if err == nil {
					body, _ = io.ReadAll(res.Body)
					res.Body.Close()
				}
				if err != nil || res.StatusCode != http.StatusOK || string(body) != sb.data {
					if failed.Add(1) <= 3 {
						t.Errorf("signed download %d: %v %s", i, err, trimBody(body))
					}
				}
			}
		}()
	}
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Errorf("%d of %d signed downloads failed", f, n)
	}
}

func trimBody(b []byte) string {
	if len(b) > 200 {
		b = b[:200]
	}
	return string(b)
}

// snapshotLoop snapshots sb until stop says so (at most max times) and
// returns the snapshot ids.
func snapshotLoop(t *testing.T, s *server, sb *loadSandbox, stop func() bool, max int) []string {
	var ids []string
	for len(ids) < max && (len(ids) == 0 || !stop()) {
		status, body := s.call(t, "POST", "/sandboxes/"+sb.ID+"/snapshots", `{}`)
		var snap struct {
			SnapshotID string `json:"snapshotID"`
		}
		if status != http.StatusCreated || json.Unmarshal(body, &snap) != nil {
			t.Errorf("snapshot %d under load: %d %s", len(ids), status, body)
			return ids
		}
		ids = append(ids, snap.SnapshotID)
	}
	return ids
}

// openIdleConns opens n connections that send nothing, or half a request.
func openIdleConns(t *testing.T, s *server, n int) []net.Conn {
	t.Helper()
	addr := strings.TrimPrefix(s.url, "http://")
	conns := make([]net.Conn, 0, n)
	for i := range n {
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Fatalf("idle connection %d: %v", i, err)
		}
		if i%2 == 1 {
			fmt.Fprintf(c, "GET /health HTTP/1.1\r\nHost: %s\r\nX-Slow: ", addr)
		}
		conns = append(conns, c)
	}
	t.Cleanup(func() {
		for _, c := range conns {
			c.Close()
		}
	})
	return conns
}

// probeHealth GETs /health on a fresh connection every 100 ms until done,
// and returns how long each took; a probe that fails counts as a minute.
func probeHealth(s *server, done *atomic.Bool) []time.Duration {
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var out []time.Duration
	for !done.Load() {
		start := time.Now()
		res, err := client.Get(s.url + "/health")
		d := time.Since(start)
		if err != nil || res.StatusCode != http.StatusOK {
			d = time.Minute
		}
		if err == nil {
			res.Body.Close()
		}
		out = append(out, d)
		time.Sleep(100 * time.Millisecond)
	}
	return out
}

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

// stats are the server's own figures from GET /metrics.
type stats struct{ Goroutines, OpenFDs int }

func serverStats(t *testing.T, s *server) stats {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	req, _ := http.NewRequest("GET", s.url+"/metrics", nil)
	req.Header.Set("X-API-KEY", s.apiKey)
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer res.Body.Close()
	var st stats
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		name, value, _ := strings.Cut(sc.Text(), " ")
		v, _ := strconv.ParseFloat(value, 64)
		switch name {
		case "go_goroutines":
			st.Goroutines = int(v)
		case "process_open_fds":
			st.OpenFDs = int(v)
		}
	}
	if st.Goroutines == 0 || st.OpenFDs == 0 {
		t.Fatalf("GET /metrics: %s without go_goroutines and process_open_fds", res.Status)
	}
	return st
}

// waitBaseline waits (bounded) for the server's goroutines and open files
// to come back to base, with a little room for timers and the probe's own
// connection.
func waitBaseline(t *testing.T, s *server, base stats) {
	t.Helper()
	const slackG, slackFD = 10, 5
	var now stats
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if now = serverStats(t, s); now.Goroutines <= base.Goroutines+slackG && now.OpenFDs <= base.OpenFDs+slackFD {
			t.Logf("back to %+v (baseline %+v)", now, base)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Errorf("after the load the server holds %+v; baseline %+v", now, base)
}
