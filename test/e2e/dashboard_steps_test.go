package e2e

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
)

// signIn opens the dashboard and signs in with the form.
func (b *browser) signIn(url, key string) {
	b.t.Helper()
	b.do("opening the sign-in form",
		chromedp.Navigate(url+"/dashboard/"),
		chromedp.WaitVisible(chromedp.CSS("#apikey")),
		chromedp.SendKeys(chromedp.CSS("#apikey"), "e2b_wrong"),
		chromedp.Click(chromedp.CSS(`#login button[type="submit"]`)))
	b.until("the refusal of a wrong key", `document.querySelector('#login .error')?.textContent.includes('refused')`, 10*time.Second)
	b.eval(`document.querySelector('#apikey').value = ''`)
	b.do("signing in",
		chromedp.SendKeys(chromedp.CSS("#apikey"), key),
		chromedp.Click(chromedp.CSS(`#login button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS("#filter-metadata")))
}

// findByMetadata filters the list by metadata: want stays, other goes.
func (b *browser) findByMetadata(filter, want, other string) {
	b.t.Helper()
	has := func(id string) string { return fmt.Sprintf(`!!document.querySelector('a[data-sandbox=%q]')`, id) }
	b.until("both sandboxes listed", has(want)+" && "+has(other), 20*time.Second)
	b.do("filtering by metadata", chromedp.SendKeys(chromedp.CSS("#filter-metadata"), filter))
	b.until("the filtered list", has(want)+" && !"+has(other), 20*time.Second)
}

// openSandbox opens a sandbox's page from the list and waits for its CPU
// chart to be drawn from at least one sample.
func (b *browser) openSandbox(id string) {
	b.t.Helper()
	b.do("opening the sandbox", chromedp.Click(chromedp.CSS(fmt.Sprintf("a[data-sandbox=%q]", id))))
	b.until("the sandbox's page", `document.querySelector('#sandbox-state')?.textContent === 'running'`, 20*time.Second)
	b.until("its created event", `[...document.querySelectorAll('#sandbox-events td')].some((td) => td.textContent === 'created')`, 20*time.Second)
	samples := 1
	if b.shots != "" {
		samples = 4 // a line, not a dot, in the picture
	}
	b.until("a CPU chart with samples", fmt.Sprintf(
		`+document.querySelector('#chart-cpu')?.closest('section')?.dataset.samples >= %d && !!document.querySelector('#chart-cpu canvas')`, samples),
		60*time.Second)
	// uPlot draws the series on the canvas: some pixel of it is not blank.
	b.until("a drawn chart", `(() => { const c = document.querySelector('#chart-cpu canvas');
		const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
		for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) return true; return false; })()`, 10*time.Second)
}

// terminal opens the terminal, types cmd and waits for want on screen.
func (b *browser) terminal(cmd, want string) {
	b.t.Helper()
	b.do("opening the terminal", chromedp.Click(chromedp.CSS("#open-terminal")))
	b.until("the shell", `document.querySelector('#terminal-status')?.textContent.startsWith('shell running')`, 30*time.Second)
	b.until("the prompt", `document.querySelector('#terminal .xterm-rows')?.textContent.includes('$')`, 30*time.Second)
	b.do("typing a command", chromedp.Focus(chromedp.CSS("#terminal .xterm-helper-textarea")), typeText(cmd+"\r"))
	b.until("the command's output", fmt.Sprintf(`[...document.querySelectorAll('#terminal .xterm-rows > div')].some((r) => r.textContent.trim() === %s)`,
		strconv.Quote(want)), 20*time.Second)
	b.shot("terminal")
	// The PTY follows the element: a shorter panel, fewer rows for stty.
	b.eval(`window.rowsBefore = document.querySelectorAll('#terminal .xterm-rows > div').length;
		document.querySelector('#terminal').style.height = '200px'`)
	b.until("fewer rows", `document.querySelectorAll('#terminal .xterm-rows > div').length < window.rowsBefore`, 10*time.Second)
	b.until("the PTY resized", `document.querySelector('#terminal').dataset.ptySize?.startsWith(
		document.querySelectorAll('#terminal .xterm-rows > div').length + 'x')`, 10*time.Second)
	b.do("asking the PTY its size", typeText("stty size\r"))
	b.until("the PTY's new size", `(() => { const n = document.querySelectorAll('#terminal .xterm-rows > div').length;
		return [...document.querySelectorAll('#terminal .xterm-rows > div')].some((r) => new RegExp('^' + n + ' [0-9]+$').test(r.textContent.trim())); })()`,
		10*time.Second)
}

// typeText types text into the focused element as a keyboard does: each
// character as the text it inserts (a char event), Enter as a key press.
// chromedp's SendKeys sends a keydown with the key and then that char,
// which xterm.js takes as two keystrokes (a real keydown it handles
// cancels the keypress; a separately dispatched char is not cancelled).
func typeText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		for _, r := range text {
			events := []input.DispatchKeyEventParams{{Type: input.DispatchKeyEventTypeChar, Text: string(r)}}
			if r == '\r' {
				enter := input.DispatchKeyEventParams{Key: "Enter", Code: "Enter", WindowsVirtualKeyCode: 13}
				down, up := enter, enter
				down.Type, up.Type = input.DispatchKeyEventTypeRawKeyDown, input.DispatchKeyEventTypeKeyUp
				events = []input.DispatchKeyEventParams{down, up}
			}
			for _, ev := range events {
				if _, err := chromedp.Call(ctx, input.DispatchKeyEvent, ev); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// visitPages shows the templates page, template tpl's build log (which
// has logLine), and the keys and usage pages.
func (b *browser) visitPages(tpl, logLine string) {
	b.t.Helper()
	link := fmt.Sprintf(`a[data-name=%q]`, tpl)
	b.do("the templates page", chromedp.Click(chromedp.CSS(`nav a[data-page="templates"]`)))
	b.until("the template", fmt.Sprintf(`!!document.querySelector('%s')`, link), 10*time.Second)
	b.shot("templates")
	b.do("the template's page", chromedp.Click(chromedp.CSS(link)),
		chromedp.WaitVisible(chromedp.CSS("button[data-build]")),
		chromedp.Click(chromedp.CSS("button[data-build]")))
	b.until("the build's log", fmt.Sprintf(`document.querySelector('#build-log')?.textContent.includes(%s)`, strconv.Quote(logLine)), 10*time.Second)
	b.shot("template")
	b.do("the keys page", chromedp.Click(chromedp.CSS(`nav a[data-page="keys"]`)),
		chromedp.WaitVisible(chromedp.CSS("#key-name")),
		chromedp.SendKeys(chromedp.CSS("#key-name"), "from-the-dashboard"),
		chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)))
	b.until("the new key, shown once", `document.querySelector('#new-key')?.value.startsWith('e2b_')`, 10*time.Second)
	b.until("the new key listed", `document.querySelector('#key-list')?.textContent.includes('from-the-dashboard')`, 10*time.Second)
	b.shot("keys")
	b.do("the usage page", chromedp.Click(chromedp.CSS(`nav a[data-page="usage"]`)))
	b.until("usage charts or their absence", `!!document.querySelector('#usage-sandboxes canvas, #usage-missing')`, 10*time.Second)
	if b.shots != "" {
		// The picture shows the sandboxes of this test: the last hour,
		// once the per-minute sampler has counted them.
		b.do("the last hour", chromedp.Click(chromedp.CSS(`button[data-range="1h"]`)))
		b.until("a usage sample", `+document.querySelector('#usage')?.dataset.peak > 0`, 100*time.Second)
	}
	b.shot("usage")
}

// signOutAndInByURL signs out, then in through /dashboard/#key=KEY, which
// leaves no key in the address.
func (b *browser) signOutAndInByURL(url, key string) {
	b.t.Helper()
	b.do("signing out", chromedp.Click(chromedp.CSS("#signout")), chromedp.WaitVisible(chromedp.CSS("#apikey")))
	b.until("the key forgotten", `sessionStorage.length === 0`, 5*time.Second)
	b.do("signing in by URL", chromedp.Navigate(url+"/dashboard/#key="+key), chromedp.WaitVisible(chromedp.CSS("#filter-metadata")))
	b.until("the key gone from the address", `!location.href.includes('key=')`, 5*time.Second)
}

// pauseResumeKill pauses and resumes the sandbox from its page, sees the
// events, then kills it (two clicks) and waits for the list without it.
func (b *browser) pauseResumeKill(id string) {
	b.t.Helper()
	state := func(s string) string {
		return fmt.Sprintf(`document.querySelector('#sandbox-state')?.textContent === %q`, s)
	}
	b.do("opening the sandbox", chromedp.Click(chromedp.CSS(fmt.Sprintf("a[data-sandbox=%q]", id))),
		chromedp.WaitVisible(chromedp.CSS("#action-pause")), chromedp.Click(chromedp.CSS("#action-pause")))
	b.until("the sandbox paused", state("paused"), 60*time.Second)
	b.do("resuming", chromedp.Click(chromedp.CSS("#action-resume")))
	b.until("the sandbox running", state("running"), 60*time.Second)
	b.until("its lifecycle events", `['created', 'paused', 'resumed'].every((e) =>
		[...document.querySelectorAll('#sandbox-events td')].some((td) => td.textContent === e))`, 20*time.Second)
	b.do("killing", chromedp.WaitVisible(chromedp.CSS("#action-kill")),
		chromedp.Click(chromedp.CSS("#action-kill")),
		chromedp.Click(chromedp.CSS("#action-kill")))
	b.until("the list", `location.hash === '#/sandboxes' && !!document.querySelector('#sandbox-list table, #sandbox-list .empty')`, 30*time.Second)
	b.until("the sandbox gone", fmt.Sprintf(`!document.querySelector('a[data-sandbox=%q]')`, id), 10*time.Second)
	// The sandbox above was a cold start: the queue shows it never waited.
	b.until("the start queue", `/^Start queue: \d+ starting, none waiting, \d+ at once · since start \d+ waited their turn.*, 0 refused$/.test(document.querySelector('#start-queue')?.textContent)`, 10*time.Second)
}

// showsError opens a sandbox that is gone: the page shows the API's
// message, not a blank page.
func (b *browser) showsError(id string) {
	b.t.Helper()
	b.eval(fmt.Sprintf("location.hash = '#/sandboxes/%s'", id))
	b.until("the API's error", fmt.Sprintf(`document.querySelector('main .error')?.textContent.includes(%q)`, id), 10*time.Second)
}
