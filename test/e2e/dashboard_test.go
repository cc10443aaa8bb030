package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestDashboard drives the web dashboard in a real headless Chromium
// against a real server: sign in with the form, find a sandbox the Go SDK
// created by its metadata, open it, see its CPU chart drawn from samples,
// run a command in its terminal and read the output, visit the other
// pages, sign out and in again through /dashboard/#key=, pause, resume
// and kill the sandbox from its page, seeing its lifecycle events, and
// see the API's error on the page of the sandbox gone (the SDK then finds it gone). With
// WARREN_SCREENSHOTS=dir (relative to the repository's root) it saves
// dashboard-*.png of the main pages there.
func TestDashboard(t *testing.T) {
	cfg := loadConfig(t)
	chromium := testutil.RequiresBinary(t, "chromium")
	s := launchServer(t, cfg, serverOpts{index: 160, runtime: cfg.runtimes[0]})
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	tag := "dash-" + strings.ToLower(s.apiKey[len(s.apiKey)-6:])
	sb, err := c.Create(t.Context(), "base", warren.CreateOptions{Timeout: 10 * time.Minute,
		Metadata: map[string]string{"suite": tag, "owner": "ann"}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	other, err := c.Create(t.Context(), "base", warren.CreateOptions{Timeout: 10 * time.Minute,
		Metadata: map[string]string{"suite": "other"}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	tpl := "dash-tpl-" + tag[len("dash-"):]
	if _, err := c.BuildTemplate(t.Context(), tpl, warren.NewTemplate().FromTemplate("base").RunCmd("echo built-for-the-dashboard"),
		warren.TemplateBuildOptions{}); err != nil {
		t.Fatalf("BuildTemplate: %v", err)
	}
	shots := os.Getenv("WARREN_SCREENSHOTS")
	if shots != "" && !filepath.IsAbs(shots) {
		shots = filepath.Join(cfg.repoRoot, shots) // docs/img from the repository's root
	}
	b := newBrowser(t, chromium, shots)
	b.signIn(s.url, s.apiKey)
	b.findByMetadata("suite="+tag, sb.ID, other.ID)
	b.shot("sandboxes")
	b.openSandbox(sb.ID)
	b.shot("sandbox")
	b.terminal("echo dash-$((40+2))", "dash-42")
	b.visitPages(tpl, "built-for-the-dashboard")
	b.signOutAndInByURL(s.url, s.apiKey)
	b.pauseResumeKill(sb.ID)
	b.showsError(sb.ID)
	if _, err := c.Info(t.Context(), sb.ID); !errors.Is(err, warren.ErrNotFound) {
		t.Errorf("Info after the dashboard killed it = %v, want ErrNotFound", err)
	}
	if info, err := c.Info(t.Context(), other.ID); err != nil || info.State != "running" {
		t.Errorf("the other sandbox = %+v, %v; want it running", info, err)
	}
}

// browser is one headless Chromium tab the test drives.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string // where shot saves screenshots; "" for nowhere
}

// newBrowser starts Chromium headless, reaching loopback only: every host
// name but localhost resolves to nothing, and any other address is sent
// to a proxy on a closed loopback port.
func newBrowser(t *testing.T, path, shots string) *browser {
	return startBrowser(t, path, shots,
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1"),
		// Everything but loopback (which Chromium never proxies) goes to
		// a proxy that is not there: IP literals too.
		chromedp.ProxyServer("http://127.0.0.1:9"))
}

// startBrowser starts Chromium headless with the options every test uses
// and extra, which must keep it on loopback.
func startBrowser(t *testing.T, path, shots string, extra ...chromedp.ExecAllocatorOption) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.DisableGPU,
		chromedp.WindowSize(1280, 900),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-domain-reliability", true),
	)
	opts = append(opts, extra...)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses its sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(t.Context(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	ctx, cancelTimeout := context.WithTimeout(ctx, 5*time.Minute)
	t.Cleanup(cancelTimeout)
	b := &browser{t: t, ctx: ctx, shots: shots}
	// Start the browser before listening: Console on a tab not yet made
	// races its creation.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	done := make(chan struct{})
	go func() { defer close(done); b.logConsole() }()
	t.Cleanup(func() { cancelTimeout(); <-done }) // no logging after the test
	return b
}

// logConsole logs what the page writes to its console, for a failure's
// diagnosis, and fails the test on an uncaught exception or rejection and
// on a CSP refusal the dashboard does not expect.
func (b *browser) logConsole() {
	for m, err := range chromedp.Console(b.ctx) {
		if err != nil {
			return
		}
		if m.Type == chromedp.ConsoleException {
			b.t.Errorf("uncaught in the page: %s (%s:%d)", m.Text, m.URL, m.Line)
			continue
		}
		// The CSP refuses xterm.js's <style> elements (terminal.js applies
		// them another way); any other refusal is a dashboard bug.
		if strings.Contains(m.Text, "Content Security Policy") && !strings.Contains(m.Text, "Applying inline style") {
			b.t.Errorf("the CSP refused something: %s", m.Text)
			continue
		}
		b.t.Logf("browser console: %v", m)
	}
}

// do runs actions, failing the test with what on error.
func (b *browser) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	if err := chromedp.Do(b.ctx, actions...); err != nil {
		b.failure()
		b.t.Fatalf("%s: %v", what, err)
	}
}

// eval runs a JavaScript statement in the page.
func (b *browser) eval(expr string) {
	b.t.Helper()
	if _, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](expr+"; null")); err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
}

// until polls a JavaScript expression until it is true.
func (b *browser) until(what, expr string, timeout time.Duration) {
	b.t.Helper()
	_, err := chromedp.Run(b.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(timeout)))
	if err != nil {
		b.failure()
		b.t.Fatalf("waiting for %s (%s): %v", what, expr, err)
	}
}

// failure logs what the page shows and keeps a screenshot of it, for the
// diagnosis of a failing step.
func (b *browser) failure() {
	if text, err := chromedp.Run(b.ctx, chromedp.Evaluate[string]("document.body.innerText")); err == nil {
		b.t.Logf("the page shows:\n%s", text)
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err != nil {
		return
	}
	path := filepath.Join(os.TempDir(), "warren-dashboard-failure.png")
	if os.WriteFile(path, png, 0o644) == nil {
		b.t.Logf("screenshot of the failure: %s", path)
	}
}

// shot saves a screenshot of the window as dashboard-NAME.png in b.shots.
func (b *browser) shot(name string) {
	if b.shots == "" {
		return
	}
	if name != "terminal" {
		b.eval("window.scrollTo(0, 0)")
	}
	png, err := chromedp.Run(b.ctx, chromedp.CaptureScreenshot())
	if err == nil {
		err = os.WriteFile(filepath.Join(b.shots, "dashboard-"+name+".png"), png, 0o644)
	}
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
	}
}
