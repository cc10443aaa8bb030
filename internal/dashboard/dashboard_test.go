package dashboard

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/httperr"
)

func get(t *testing.T, h http.Handler, method, path string, hdr map[string]string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, "http://warren"+path, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Result()
}

// TestServe: paths, content types, caching and the error body.
func TestServe(t *testing.T) {
	t.Parallel()
	h := New()
	cases := []struct {
		name, method, path string
		status             int
		ctype, contains    string
	}{
		{"page", "GET", "/dashboard/", 200, "text/html; charset=utf-8", "<title>warren dashboard</title>"},
		{"page by name", "GET", "/dashboard/index.html", 200, "text/html; charset=utf-8", `src="js/main.js"`},
		{"module", "GET", "/dashboard/js/main.js", 200, "text/javascript; charset=utf-8", "import"},
		{"volumes page", "GET", "/dashboard/js/volumes.js", 200, "text/javascript; charset=utf-8", "'/volumes'"},
		{"sandbox page", "GET", "/dashboard/js/sandbox.js", 200, "text/javascript; charset=utf-8", "screen.el, terminalPanel("},
		{"screen panel", "GET", "/dashboard/js/screen.js", 200, "text/javascript; charset=utf-8", "'scrot'"},
		{"envd files", "GET", "/dashboard/js/envd.js", 200, "text/javascript; charset=utf-8", "'/files'"},
		{"vendored module", "GET", "/dashboard/vendor/xterm/xterm.mjs", 200, "text/javascript; charset=utf-8", "Terminal"},
		{"vendored chart", "GET", "/dashboard/vendor/uplot/uPlot.esm.js", 200, "text/javascript; charset=utf-8", "uPlot"},
		{"stylesheet", "GET", "/dashboard/app.css", 200, "text/css; charset=utf-8", "--accent"},
		{"icon", "GET", "/dashboard/favicon.svg", 200, "image/svg+xml", "<svg"},
		{"license", "GET", "/dashboard/vendor/xterm/LICENSE", 200, "text/plain; charset=utf-8", "MIT"},
		{"head", "HEAD", "/dashboard/app.css", 200, "text/css; charset=utf-8", ""},
		{"missing", "GET", "/dashboard/nope.js", 404, "application/json", "no dashboard file"},
		{"directory", "GET", "/dashboard/js/", 404, "application/json", "no dashboard file"},
		{"directory without slash", "GET", "/dashboard/vendor", 404, "application/json", "no dashboard file"},
		{"climbing out", "GET", "/dashboard/js/../../server.go", 404, "application/json", "no dashboard file"},
		{"embedded root name", "GET", "/dashboard/static/index.html", 404, "application/json", "no dashboard file"},
		{"outside the prefix", "GET", "/other", 404, "application/json", "no dashboard file"},
		{"post", "POST", "/dashboard/", 405, "application/json", "GET"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp := get(t, h, tc.method, tc.path, nil)
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.status {
				t.Fatalf("%s %s = %d, want %d: %s", tc.method, tc.path, resp.StatusCode, tc.status, body)
			}
			if got := resp.Header.Get("Content-Type"); got != tc.ctype {
				t.Errorf("Content-Type = %q, want %q", got, tc.ctype)
			}
			if !strings.Contains(string(body), tc.contains) {
				t.Errorf("body does not contain %q: %.200s", tc.contains, body)
			}
			if resp.Header.Get("Content-Security-Policy") != CSP || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("security headers missing: %v", resp.Header)
			}
			checkCaching(t, resp, body)
		})
	}
}

func checkCaching(t *testing.T, resp *http.Response, body []byte) {
	t.Helper()
	cc := resp.Header.Get("Cache-Control")
	if resp.StatusCode != 200 {
		var e struct {
			Code      int    `json:"code"`
			ErrorCode string `json:"error_code"`
			Message   string `json:"message"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Code != resp.StatusCode || e.Message == "" ||
			e.ErrorCode != httperr.ForStatus(resp.StatusCode) {
			t.Errorf("error body %q is not {code, error_code, message}", body)
		}
		if cc != "no-store" {
			t.Errorf("error Cache-Control = %q, want no-store", cc)
		}
		return
	}
	if cc != "no-cache" || resp.Header.Get("ETag") == "" {
		t.Errorf("Cache-Control %q, ETag %q: want revalidation with an ETag", cc, resp.Header.Get("ETag"))
	}
}

// TestRevalidate: a browser that has the file gets 304.
func TestRevalidate(t *testing.T) {
	t.Parallel()
	h := New()
	etag := get(t, h, "GET", "/dashboard/js/api.js", nil).Header.Get("ETag")
	resp := get(t, h, "GET", "/dashboard/js/api.js", map[string]string{"If-None-Match": etag})
	if resp.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation = %d, want 304", resp.StatusCode)
	}
}

// TestCSPIsStrict: the policy allows nothing from other origins and no
// inline script or style.
func TestCSPIsStrict(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"unsafe-inline", "unsafe-eval", "http:", "https:", "*"} {
		if strings.Contains(CSP, bad) {
			t.Errorf("CSP allows %q: %s", bad, CSP)
		}
	}
	for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'",
		"img-src 'self' data: blob:;"} {
		if !strings.Contains(CSP, want) {
			t.Errorf("CSP lacks %q", want)
		}
	}
}

var (
	imports    = regexp.MustCompile(`(?m)^(?:import|export) [^'"\n]*from '([^']+)';$`)
	htmlRefs   = regexp.MustCompile(`(?:src|href)="([^"#]+)"`)
	remoteRefs = regexp.MustCompile(`(?i)(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}/`)
)

// TestEverythingIsLocal: each module and file the page names is embedded,
// no script is inline, no file of ours loads anything from elsewhere, and
// none parses strings as markup.
func TestEverythingIsLocal(t *testing.T) {
	t.Parallel()
	h := New()
	index := string(h.files["index.html"].data)
	if strings.Contains(index, "<script>") || strings.Contains(index, "style=") || strings.Contains(index, "<style") {
		t.Error("index.html has inline script or style, which the CSP refuses")
	}
	for _, m := range htmlRefs.FindAllStringSubmatch(index, -1) {
		if _, ok := h.files[m[1]]; !ok {
			t.Errorf("index.html names %s, which is not embedded", m[1])
		}
	}
	checked := 0
	for name, f := range h.files {
		if !strings.HasPrefix(name, "js/") {
			continue
		}
		if remoteRefs.Match(f.data) {
			t.Errorf("%s names another origin", name)
		}
		for _, markup := range []string{".innerHTML", ".outerHTML", "insertAdjacentHTML", "document.write"} {
			if strings.Contains(string(f.data), markup) {
				t.Errorf("%s uses %s: build elements with dom.js's h", name, markup)
			}
		}
		for _, m := range imports.FindAllStringSubmatch(string(f.data), -1) {
			checked++
			target := resolve(name, m[1])
			if _, ok := h.files[target]; !ok {
				t.Errorf("%s imports %s (%s), which is not embedded", name, m[1], target)
			}
		}
	}
	if checked < 10 {
		t.Errorf("found only %d imports: has the module syntax changed?", checked)
	}
}

// resolve resolves a relative import of the module named from.
func resolve(from, rel string) string {
	dir := from[:strings.LastIndex(from, "/")+1]
	parts := strings.Split(dir+rel, "/")
	var out []string
	for _, p := range parts {
		switch p {
		case ".", "":
		case "..":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
		default:
			out = append(out, p)
		}
	}
	return strings.Join(out, "/")
}

// TestVendoredLicenses: each vendored library keeps its license and the
// versions file names it.
func TestVendoredLicenses(t *testing.T) {
	t.Parallel()
	h := New()
	versions := string(h.files["vendor/VERSIONS"].data)
	for dir, pkg := range map[string]string{"xterm": "@xterm/xterm@", "addon-fit": "@xterm/addon-fit@", "uplot": "uplot@"} {
		if _, ok := h.files["vendor/"+dir+"/LICENSE"]; !ok {
			t.Errorf("vendor/%s has no LICENSE", dir)
		}
		if !strings.Contains(versions, pkg) {
			t.Errorf("vendor/VERSIONS does not record %s", pkg)
		}
	}
}
