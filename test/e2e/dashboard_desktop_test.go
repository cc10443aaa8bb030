package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/warren-sandbox/warren/internal/testutil"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// dashboardDesktopIndex is TestDashboardDesktop's server.
const dashboardDesktopIndex = 226

// TestDashboardDesktop drives the sandbox page's Screen panel in a real
// headless Chromium against a `warren serve --desktop`: on a desktop
// sandbox created as @e2b/desktop does (DISPLAY=:0 in its envs) the panel
// first says the display is missing, then, once Xvfb runs as the SDK
// starts it, shows a 1024x768 picture that follows what is on the screen
// (a full-screen window of one colour, then another on top); paused it
// takes no more, Refresh takes one, and leaving the page stops it. With
// noVNC running, the panel links to the stream. A base sandbox with DISPLAY in its envs gets the panel,
// one without does not.
func TestDashboardDesktop(t *testing.T) {
	cfg := loadConfig(t)
	chromium := testutil.RequiresBinary(t, "chromium")
	s := launchServer(t, cfg, serverOpts{index: dashboardDesktopIndex, runtime: cfg.runtimes[0], args: []string{"--desktop"}})
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	create := func(template string, envs map[string]string) *warren.Sandbox {
		t.Helper()
		sb, err := c.Create(t.Context(), template, warren.CreateOptions{Timeout: 10 * time.Minute, EnvVars: envs})
		if err != nil {
			t.Fatalf("Create %s: %v", template, err)
		}
		return sb
	}
	desk := create("desktop", map[string]string{"DISPLAY": ":0"})
	withDisplay := create("base", map[string]string{"DISPLAY": ":0"})
	plain := create("base", nil)

	b := newBrowser(t, chromium, "")
	b.signIn(s.url, s.apiKey)
	b.sandboxPage(plain.ID)
	b.until("no display found", `document.querySelector('#screen')?.dataset.display === 'none'`, 20*time.Second)
	if b.bool(`!document.querySelector('#screen').hidden`) {
		t.Errorf("a sandbox without DISPLAY shows the Screen panel")
	}
	b.sandboxPage(withDisplay.ID)
	b.screenInView()
	b.until("the panel from DISPLAY in the envs, and scrot's absence in base", `document.querySelector('#screen')?.dataset.display === ':0' &&
		/^screenshot failed: /.test(document.querySelector('#screen-status')?.textContent)`, 30*time.Second)

	b.sandboxPage(desk.ID)
	b.screenInView()
	b.until("the display missing", `document.querySelector('#screen-status')?.textContent === 'no display: the desktop has not started'`, 30*time.Second)
	deskStartXvfb(t, desk)
	b.screenColour(desk, "#ff0000", "255,0,0")
	b.until("a 1024x768 picture", `(() => { const i = document.querySelector('#screen-img');
		return i.complete && i.naturalWidth === 1024 && i.naturalHeight === 768; })()`, 10*time.Second)
	b.screenColour(desk, "#0000ff", "0,0,255")

	// Paused, no picture is taken; Refresh takes one.
	b.do("pausing", chromedp.Click(chromedp.CSS("#screen-pause")))
	time.Sleep(3 * time.Second) // a picture under way when paused lands
	shots := b.str(`document.querySelector('#screen-img').dataset.shots`)
	deskPaint(t, desk, "#00ff00")
	time.Sleep(5 * time.Second)
	if now := b.str(`document.querySelector('#screen-img').dataset.shots`); now != shots || b.str(screenPixel) != "0,0,255" {
		t.Errorf("paused: %s pictures (was %s), pixel %s; want no new picture", now, shots, b.str(screenPixel))
	}
	b.do("refreshing", chromedp.Click(chromedp.CSS("#screen-refresh")))
	b.until("the refreshed picture", screenPixel+` === '0,255,0'`, 20*time.Second)

	// Away from the page, no more pictures are taken.
	b.do("resuming", chromedp.Click(chromedp.CSS("#screen-pause")))
	b.eval("location.hash = '#/sandboxes'")
	time.Sleep(3 * time.Second)
	deskRun(t, desk, "rm -f /tmp/.warren-screen.png")
	time.Sleep(5 * time.Second)
	if r, err := desk.Commands.Run(t.Context(), "test -e /tmp/.warren-screen.png", warren.CommandOptions{}); err == nil && r.ExitCode == 0 {
		t.Errorf("a screenshot was taken after the page was left")
	}

	// With noVNC serving as the SDK's stream.start() runs it, Refresh
	// finds it and links to the stream's page.
	h, err := desk.Commands.Start(t.Context(), "cd /opt/noVNC/utils && ./novnc_proxy --vnc localhost:5900 --listen 6080 --web /opt/noVNC",
		warren.CommandOptions{User: "user", Timeout: warren.NoTimeout})
	if err != nil {
		t.Fatalf("starting noVNC: %v", err)
	}
	h.Disconnect()
	b.sandboxPage(desk.ID)
	b.screenInView()
	for i := 0; b.bool(`document.querySelector('#screen-live').hidden`); i++ {
		if i == 30 {
			b.failure()
			t.Fatal("no stream link 30 s after noVNC started")
		}
		time.Sleep(time.Second) // noVNC is starting
		b.eval(`document.querySelector('#screen-refresh').click()`)
	}
	want := fmt.Sprintf("//6080-%s.%s:", desk.ID, cfg.domain)
	if href := b.str(`document.querySelector('#screen-live').href`); !strings.Contains(href, want) || !strings.HasSuffix(href, "/vnc.html?autoconnect=true&resize=scale") {
		t.Errorf("stream link %q, want one with %q to vnc.html", href, want)
	}
}

// screenPixel reads the picture's pixel at (900, 700), inside deskPaint's
// window and away from its text, its border and the pointer in the
// middle, as "r,g,b".
const screenPixel = `(() => { const i = document.querySelector('#screen-img');
	if (!i || !i.complete || !i.naturalWidth) return '';
	const c = document.createElement('canvas'); c.width = i.naturalWidth; c.height = i.naturalHeight;
	const g = c.getContext('2d'); g.drawImage(i, 0, 0);
	return Array.from(g.getImageData(900, 700, 1, 1).data.slice(0, 3)).join(','); })()`

// screenColour paints the screen colour and waits for the panel's
// picture to show it (rgb as "r,g,b").
func (b *browser) screenColour(sb *warren.Sandbox, colour, rgb string) {
	b.t.Helper()
	deskPaint(b.t, sb, colour)
	b.until("the picture in "+colour, fmt.Sprintf("%s === %q", screenPixel, rgb), 20*time.Second)
}

// sandboxPage opens a sandbox's page by its address.
func (b *browser) sandboxPage(id string) {
	b.t.Helper()
	b.eval(fmt.Sprintf("location.hash = '#/sandboxes/%s'", id))
	b.until("the sandbox's page", fmt.Sprintf(`document.querySelector('h1')?.textContent === %q &&
		document.querySelector('#sandbox-state')?.textContent === 'running'`, id), 20*time.Second)
}

// screenInView waits for the Screen panel and scrolls it into view: it
// takes pictures only while seen.
func (b *browser) screenInView() {
	b.t.Helper()
	b.until("the Screen panel", `!!document.querySelector('#screen') && !document.querySelector('#screen').hidden`, 20*time.Second)
	b.eval(`document.querySelector('#screen').scrollIntoView()`)
}

// str evaluates a JavaScript expression to a string.
func (b *browser) str(expr string) string {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](`String(`+expr+` ?? '')`))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// bool evaluates a JavaScript expression to a boolean.
func (b *browser) bool(expr string) bool {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`!!(`+expr+`)`))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// deskStartXvfb starts Xvfb in the sandbox as @e2b/desktop does (as user
// `user`, in the background) and waits until it answers.
func deskStartXvfb(t *testing.T, sb *warren.Sandbox) {
	t.Helper()
	h, err := sb.Commands.Start(t.Context(), "Xvfb :0 -ac -screen 0 1024x768x24 -retro -dpi 96 -nolisten tcp -nolisten unix",
		warren.CommandOptions{User: "user", Timeout: warren.NoTimeout})
	if err != nil {
		t.Fatalf("starting Xvfb: %v", err)
	}
	h.Disconnect()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	for {
		r, err := sb.Commands.Run(ctx, "xdpyinfo -display :0 >/dev/null", warren.CommandOptions{User: "user"})
		if err == nil && r.ExitCode == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("Xvfb did not answer: %v", err)
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// deskPaint covers the screen with a window of colour, above the ones
// before: xmessage (x11-utils, which the SDK needs for xdpyinfo) in the
// background. (xsetroot -solid leaves scrot's pictures of Xvfb as they
// were: tried.)
func deskPaint(t testing.TB, sb *warren.Sandbox, colour string) {
	t.Helper()
	h, err := sb.Commands.Start(t.Context(), fmt.Sprintf("xmessage -display :0 -bg '%s' -geometry 1024x768+0+0 %s", colour, colour[1:]),
		warren.CommandOptions{User: "user", Timeout: warren.NoTimeout})
	if err != nil {
		t.Fatalf("xmessage %s: %v", colour, err)
	}
	h.Disconnect()
}

// deskRun runs a shell command in the sandbox as user `user`, failing the test
// if it fails.
func deskRun(t testing.TB, sb *warren.Sandbox, cmd string) {
	t.Helper()
	if r, err := sb.Commands.Run(t.Context(), cmd, warren.CommandOptions{User: "user"}); err != nil {
		t.Fatalf("%s: %v (%+v)", cmd, err, r)
	}
}
