package warren

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/proxy"
)

// tokenSandbox is the proxy's view of a private sandbox "sb1".
type tokenSandbox struct{}

func (tokenSandbox) Resolve(_ context.Context, id string) (*proxy.Target, error) {
	return &proxy.Target{ID: id, IP: netip.MustParseAddr("127.0.0.1"), TrafficAccessToken: "t0k"}, nil
}

func (tokenSandbox) LiveTokens() map[string]string { return nil }

// TestBrowserURL: the URL names the port's host and, for a private
// sandbox, carries the token as warren's proxy takes it: the proxy
// answers it with a redirect to the same URL less the token, and a cookie.
func TestBrowserURL(t *testing.T) {
	h := proxy.New(tokenSandbox{}, http.NotFoundHandler(), "example.test")
	tests := []struct {
		name, token, target, want, location string
	}{
		{"public", "", "/vnc.html?autoconnect=true", "https://6080-sb1.example.test/vnc.html?autoconnect=true", ""},
		{"private, query", "t0k", "/vnc.html?autoconnect=true&resize=scale",
			"https://6080-sb1.example.test/vnc.html?autoconnect=true&resize=scale&e2b_traffic_token=t0k", "/vnc.html?autoconnect=true&resize=scale"},
		{"private, bare path", "t0k", "vnc.html", "https://6080-sb1.example.test/vnc.html?e2b_traffic_token=t0k", "/vnc.html"},
		{"private, root with fragment", "t0k", "#top", "https://6080-sb1.example.test/?e2b_traffic_token=t0k#top", "/"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sb := &Sandbox{ID: "sb1", Domain: "example.test", TrafficAccessToken: tc.token}
			got := sb.BrowserURL(6080, tc.target)
			if got != tc.want {
				t.Fatalf("BrowserURL = %q, want %q", got, tc.want)
			}
			if tc.token == "" {
				return
			}
			sent, _, _ := strings.Cut(got, "#") // a browser keeps the fragment
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", sent, nil))
			if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != tc.location || rec.Header().Get("Set-Cookie") == "" {
				t.Fatalf("the proxy answered %d, Location %q, Set-Cookie %q; want 303 to %q with the cookie",
					rec.Code, rec.Header().Get("Location"), rec.Header().Get("Set-Cookie"), tc.location)
			}
		})
	}
}
