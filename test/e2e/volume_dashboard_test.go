package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestDashboardVolumes drives the dashboard's volumes page in a real
// headless Chromium: a volume made through the API is listed with its
// size limit and the sandbox that mounts it, the sandbox's page lists
// the mount, a delete while mounted shows the server's 409, a volume made
// with the page's form appears, and once the sandbox is gone the delete
// goes through.
func TestDashboardVolumes(t *testing.T) {
	cfg := loadConfig(t)
	chromium := testutil.RequiresBinary(t, "chromium")
	s := launchServer(t, cfg, serverOpts{index: volumeDashboardIndex, runtime: cfg.runtimes[0]})
	requireVolumeAPI(t, s)
	t.Cleanup(func() { deleteVolumes(t, s) })
	suffix := strings.ToLower(s.apiKey[len(s.apiKey)-6:])
	name := "dash-vol-" + suffix
	status, body := volumeCall(t, s, http.MethodPost, "/volumes", fmt.Sprintf(`{"name":%q}`, name))
	if status != http.StatusCreated {
		t.Fatalf("POST /volumes = %d %s", status, body)
	}
	vol := jsonField(t, body, "volumeID")
	status, body = volumeCall(t, s, http.MethodPost, "/v2/sandboxes",
		fmt.Sprintf(`{"templateID":"base","timeout":600,"volumeMounts":[{"name":%q,"path":"/mnt/data"}]}`, name))
	if status != http.StatusCreated {
		t.Fatalf("create with a volume mounted = %d %s", status, body)
	}
	sb := jsonField(t, body, "sandboxID")

	b := newBrowser(t, chromium, "")
	b.signIn(s.url, s.apiKey)
	row := fmt.Sprintf(`[...document.querySelectorAll('#volume-list tr')].find((tr) => tr.querySelector('[data-volume=%q]'))`, vol)
	b.volumesPage()
	b.until("the volume listed with its limit and mounter",
		fmt.Sprintf(`(%s)?.textContent.includes(' of ') && !!(%s)?.querySelector('a[data-mounter=%q]')`, row, row, sb), 20*time.Second)

	del := fmt.Sprintf(`button[data-delete=%q]`, vol)
	b.do("deleting while mounted", chromedp.Click(chromedp.CSS(del)), chromedp.Click(chromedp.CSS(del)))
	b.until("the server's 409", `document.querySelector('#volume-status .error')?.textContent.includes('in use')`, 10*time.Second)
	b.until("the volume still listed", fmt.Sprintf(`!!(%s)`, row), 5*time.Second)

	b.do("the mounting sandbox's page", chromedp.Click(chromedp.CSS(fmt.Sprintf(`a[data-mounter=%q]`, sb))))
	b.until("its volume mounts", fmt.Sprintf(`document.querySelector('#sandbox-volumes')?.textContent === %q`, name+" at /mnt/data"), 20*time.Second)

	b.volumesPage()
	b.do("a volume from the form", chromedp.SendKeys(chromedp.CSS("#volume-name"), "from-the-form-"+suffix),
		chromedp.Click(chromedp.CSS(`#volume-form button[type="submit"]`)))
	b.until("the form's volume", fmt.Sprintf(`document.querySelector('#volume-list')?.textContent.includes(%q)`, "from-the-form-"+suffix), 10*time.Second)

	s.mustCall(t, http.MethodDelete, "/sandboxes/"+sb, "", http.StatusNoContent)
	b.eval("location.hash = '#/sandboxes'")
	b.volumesPage()
	b.until("no mounter left", fmt.Sprintf(`!!(%s) && !(%s).querySelector('a[data-mounter]')`, row, row), 20*time.Second)
	b.do("deleting it", chromedp.Click(chromedp.CSS(del)), chromedp.Click(chromedp.CSS(del)))
	b.until("the volume gone", fmt.Sprintf(`!document.querySelector('[data-volume=%q]')`, vol), 10*time.Second)
	if status, body := volumeCall(t, s, http.MethodGet, "/volumes/"+vol, ""); status != http.StatusNotFound {
		t.Errorf("GET /volumes/%s after the page deleted it = %d %s; want 404", vol, status, body)
	}
}

// volumesPage opens the volumes page from the nav.
func (b *browser) volumesPage() {
	b.t.Helper()
	b.do("the volumes page", chromedp.Click(chromedp.CSS(`nav a[data-page="volumes"]`)), chromedp.WaitVisible(chromedp.CSS("#volume-form")))
	b.until("the list", `!!document.querySelector('#volume-list table, #volume-list .empty')`, 10*time.Second)
}
