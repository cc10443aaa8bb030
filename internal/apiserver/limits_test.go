package apiserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/apikey"
)

// TestBodyLimits: every body a client sends has a limit, and a body past
// it is refused with 413 and E2B's error body, whether it declares its
// length or arrives chunked; a body at the limit is read.
func TestBodyLimits(t *testing.T) {
	f := newRouteFixture(t)
	oldImage, oldUpload := maxImage, maxUpload
	maxImage, maxUpload = 1<<10, 1<<10
	t.Cleanup(func() { maxImage, maxUpload = oldImage, oldUpload })

	_, body := f.call(t, f.key, "POST", "/v2/sandboxes", `{"templateID":"base","timeout":60}`)
	sb := field(body, "sandboxID")
	_, body = f.call(t, f.key, "POST", "/v3/templates", `{"name":"limits"}`)
	tpl := field(body, "templateID")
	_, body = f.call(t, f.key, "GET", "/templates/"+tpl+"/files/"+filesHash, "")
	link, err := url.Parse(field(body, "url"))
	if sb == "" || tpl == "" || err != nil || link.Path == "" {
		t.Fatalf("setup: sandbox %q, template %q, upload link %q (%v)", sb, tpl, body, err)
	}
	upload := link.Path + "?" + link.RawQuery

	jsonOf := func(n int) string { return `{"x":"` + strings.Repeat("y", n-8) + `"}` }
	cases := []struct {
		name, method, path string
		limit              int
		body               func(n int) string
		key                bool
	}{
		{"create", "POST", "/v2/sandboxes", maxBody, jsonOf, true},
		{"network", "PUT", "/sandboxes/" + sb + "/network", maxBody, jsonOf, true},
		{"webhook", "POST", "/events/webhooks", maxBody, jsonOf, true},
		{"timeout", "POST", "/sandboxes/" + sb + "/timeout", maxBody, jsonOf, true},
		{"image import", "POST", "/images", int(maxImage), func(n int) string { return strings.Repeat("i", n) }, true},
		{"build files", "PUT", upload, int(maxUpload), func(n int) string { return strings.Repeat("u", n) }, false},
	}
	for _, c := range cases {
		for _, chunked := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/chunked=%v", c.name, chunked), func(t *testing.T) {
				// At the limit the body is read (and may be refused
				// for what it says, but not for its size).
				if st, msg := send(t, f, c.method, c.path, c.body(c.limit), c.key, chunked); st == 413 {
					t.Errorf("a body of %d bytes, the limit: %d %s", c.limit, st, msg)
				}
				st, msg := send(t, f, c.method, c.path, c.body(c.limit+1), c.key, chunked)
				var e struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				}
				_ = json.Unmarshal([]byte(msg), &e)
				if st != 413 || e.Code != 413 || !strings.Contains(e.Message, "larger than") {
					t.Errorf("a body of %d bytes: %d %s; want 413 with E2B's body", c.limit+1, st, msg)
				}
			})
		}
	}
}

// send makes one request; chunked hides the body's length.
func send(t *testing.T, f *routeFixture, method, path, body string, key, chunked bool) (int, string) {
	t.Helper()
	var r io.Reader = strings.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // no Len: sent without Content-Length
	}
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if key {
		req.Header.Set("X-API-KEY", f.key)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestWebhooksPerTeam: a team registers at most maxWebhooks webhooks
// (409 past it, until one is deleted); another team's count is its own.
func TestWebhooksPerTeam(t *testing.T) {
	f := newRouteFixture(t)
	other := f.addKey(t, apikey.Spec{Name: "other", Team: "other"})
	const hook = `{"url":"https://hooks.example.test/","events":["sandbox.lifecycle.killed"],"signatureSecret":"s"}`
	var last string
	for i := range maxWebhooks {
		st, body := f.call(t, f.key, "POST", "/events/webhooks", hook)
		if st != 201 {
			t.Fatalf("webhook %d: %d %s", i+1, st, body)
		}
		last = field(body, "id")
	}
	if st, body := f.call(t, f.key, "POST", "/events/webhooks", hook); st != 409 || !strings.Contains(body, "delete one first") {
		t.Errorf("webhook %d: %d %s; want 409", maxWebhooks+1, st, body)
	}
	if st, body := f.call(t, other, "POST", "/events/webhooks", hook); st != 201 {
		t.Errorf("another team's first webhook: %d %s", st, body)
	}
	if st, body := f.call(t, f.key, "DELETE", "/events/webhooks/"+last, ""); st != 204 && st != 200 {
		t.Fatalf("delete: %d %s", st, body)
	}
	if st, body := f.call(t, f.key, "POST", "/events/webhooks", hook); st != 201 {
		t.Errorf("a webhook after a delete: %d %s", st, body)
	}
}
