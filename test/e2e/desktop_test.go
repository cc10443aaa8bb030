package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// desktopIndex is TestDesktop's first bridge index; each runtime takes the
// next one, and the next loopback address (desktopAddrs).
const desktopIndex = 216

// desktopAddrs are where TestDesktop's servers listen, one per runtime: the
// SDK builds https URLs without a port, so each is on 443 of a loopback
// address of its own (TestTLSHostRoutingSDK has 127.0.0.2).
var desktopAddrs = []string{"127.0.0.3", "127.0.0.4"}

// desktopDomain is the sandbox domain of the desktop servers; names under
// it resolve to the server only in the test's own processes.
const desktopDomain = "warren.test"

// desktopStream is what desktop/desktop.test.mjs leaves for the browser:
// a running stream with a password.
type desktopStream struct {
	SandboxID string `json:"sandboxID"`
	URL       string `json:"url"`
	Wrong     string `json:"wrong"`
	Width     int    `json:"width"`
	Height    int    `json:"height"`
	// TrafficToken is the private sandbox's traffic access token.
	TrafficToken string `json:"trafficToken"`
}

// TestDesktop drives the official @e2b/desktop SDK against `warren serve
// --desktop` in TLS + Host mode on each runtime (desktop/desktop.test.mjs),
// then opens the noVNC stream it leaves running in headless Chromium. The
// sandbox is private: without the traffic token the page is refused; with
// it (once, in the URL) the canvas connects with the password, a click in
// it moves the sandbox's pointer, and a wrong password is refused.
func TestDesktop(t *testing.T) {
	cfg := loadConfig(t)
	chromium := testutil.RequiresBinary(t, "chromium")
	cfg.domain = desktopDomain
	for i, rt := range cfg.runtimes {
		if i >= len(desktopAddrs) {
			break
		}
		t.Run(rt, func(t *testing.T) {
			addr := desktopAddrs[i]
			if ln, err := net.Listen("tcp", addr+":443"); err != nil {
				t.Skipf("cannot listen on %s:443: %v", addr, err)
			} else {
				ln.Close()
			}
			// Pauses checkpoint at once: on runsc the X server goes to
			// disk and comes back.
			s := launchServer(t, cfg, serverOpts{index: desktopIndex + i, runtime: rt, tls: true,
				listen: addr + ":443", args: []string{"--desktop", "--checkpoint-after=0"}})
			out := filepath.Join(t.TempDir(), "stream.json")
			runDesktopNode(t, cfg, s, addr, "desktop/desktop.test.mjs", "E2E_STREAM_OUT="+out, "E2E_RUNTIME="+rt)
			var st desktopStream
			if data, err := os.ReadFile(out); err != nil {
				t.Fatalf("the SDK test left no stream: %v", err)
			} else if err := json.Unmarshal(data, &st); err != nil {
				t.Fatalf("reading %s: %v", out, err)
			}
			b := startBrowser(t, chromium, "",
				chromedp.Flag("host-resolver-rules", fmt.Sprintf("MAP *.%s %s, MAP * ~NOTFOUND", desktopDomain, addr)),
				chromedp.Flag("ignore-certificate-errors", true), // the TLS tests check warren's CA
				chromedp.ProxyServer("http://127.0.0.1:9"),
				chromedp.Flag("proxy-bypass-list", "*."+desktopDomain))
			b.watchStream(t, cfg, s, addr, st)
		})
	}
}

// watchStream opens st's URL, sees the desktop, clicks in it, and then
// opens the URL with a wrong password.
func (b *browser) watchStream(t *testing.T, cfg config, s *server, addr string, st desktopStream) {
	b.do("opening the stream without the traffic token", chromedp.Navigate(st.URL))
	b.until("the refusal without the token", `document.body.innerText.includes('traffic access token')`, 30*time.Second)
	// Chromium drops requests in flight when the host's interfaces
	// change (ERR_NETWORK_CHANGED), which sandboxes' veths starting and
	// stopping elsewhere on the host do: open the stream again then.
	for attempt := 1; ; attempt++ {
		b.do("opening the stream with the traffic token", chromedp.Navigate(st.URL+"&e2b_traffic_token="+st.TrafficToken))
		b.until("the token gone from the address", `!location.search.includes('e2b_traffic_token')`, 30*time.Second)
		_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](`document.documentElement.classList.contains('noVNC_connected')`,
			chromedp.WithPollingTimeout(45*time.Second)))
		if err == nil {
			break
		}
		if attempt == 3 {
			b.failure()
			t.Fatalf("noVNC did not connect in %d attempts: %v", attempt, err)
		}
		t.Logf("noVNC did not connect (attempt %d): %v; opening it again", attempt, err)
	}
	b.until("the remote screen on the canvas", fmt.Sprintf(
		`(() => { const c = document.querySelector('#noVNC_container canvas'); return !!c && c.width === %d && c.height === %d })()`,
		st.Width, st.Height), 30*time.Second)
	// resize=scale fits the screen in the window: map a desktop point to
	// the page through the canvas's box.
	rect, err := chromedp.Run(b.ctx, chromedp.Evaluate[map[string]float64](
		`(() => { const r = document.querySelector('#noVNC_container canvas').getBoundingClientRect(); return {x: r.left, y: r.top, w: r.width} })()`))
	if err != nil {
		t.Fatalf("reading the canvas box: %v", err)
	}
	scale := rect["w"] / float64(st.Width)
	want := [2]int{400, 300}
	b.do("clicking in the stream", chromedp.MouseClickXY(rect["x"]+float64(want[0])*scale+scale/2, rect["y"]+float64(want[1])*scale+scale/2))
	var got [2]int
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		pos := runDesktopNodeOutput(t, cfg, s, addr, "desktop/pointer.mjs", st.SandboxID)
		if _, err := fmt.Sscanf(pos, "%d %d", &got[0], &got[1]); err == nil &&
			math.Abs(float64(got[0]-want[0])) <= 1 && math.Abs(float64(got[1]-want[1])) <= 1 {
			break
		}
		time.Sleep(time.Second)
	}
	if math.Abs(float64(got[0]-want[0])) > 1 || math.Abs(float64(got[1]-want[1])) > 1 {
		b.failure()
		t.Fatalf("after a click in the stream at %v the sandbox's pointer is at %v", want, got)
	}
	b.do("opening the stream with a wrong password", chromedp.Navigate(st.Wrong))
	b.until("the refusal", `!document.documentElement.classList.contains('noVNC_connected') &&
		(document.getElementById('noVNC_status')?.textContent ?? '').toLowerCase().includes('rejected')`, 60*time.Second)
}

// desktopEnv is the environment of a node process that reaches s through
// its domain only, as against E2B.
func desktopEnv(s *server, addr string, extra ...string) []string {
	return append(append(environWithout("E2B_", "E2E_", "NODE_EXTRA_CA_CERTS"),
		"E2B_API_KEY="+s.apiKey,
		"E2B_DOMAIN="+desktopDomain,
		"WARREN_TLS_DOMAIN="+desktopDomain,
		"WARREN_TLS_ADDR="+addr,
		"NODE_EXTRA_CA_CERTS="+filepath.Join(s.dataDir, "tls", "ca.pem"),
	), extra...)
}

// runDesktopNode runs a node test file against s with the desktop
// environment.
func runDesktopNode(t *testing.T, cfg config, s *server, addr, file string, env ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout(t, cfg))
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "--import", "./tls/resolve.mjs",
		"--test", "--test-force-exit", "--test-reporter=spec", file)
	cmd.Dir = cfg.e2eDir
	cmd.Env = desktopEnv(s, addr, env...)
	cmd.WaitDelay = 10 * time.Second
	out := &lineLog{t: t, live: testing.Verbose()}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		out.flush()
		if !out.live {
			t.Log(out.String())
		}
		t.Fatalf("node --test %s: %v", file, err)
	}
	out.flush()
}

// runDesktopNodeOutput runs a node script against s and returns its
// standard output.
func runDesktopNodeOutput(t *testing.T, cfg config, s *server, addr, file string, args ...string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{"--import", "./tls/resolve.mjs", file}, args...)...)
	cmd.Dir = cfg.e2eDir
	cmd.Env = desktopEnv(s, addr)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("node %s: %v\n%s", file, err, strings.TrimSpace(stderr))
	}
	return strings.TrimSpace(string(out))
}
