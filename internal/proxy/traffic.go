package proxy

import (
	"crypto/subtle"
	"net/http"
	"net/url"
	"strings"

	"github.com/warren-sandbox/warren/internal/httperr"
)

// trafficTokenName is the query parameter and the cookie that carry a
// sandbox's traffic access token for a browser, which cannot send E2B's
// E2b-Traffic-Access-Token header (a warren extension). The parameter is
// taken once and swapped for a cookie of the port's own host, so the page's
// later requests and its websockets carry the token without it showing in
// URLs.
const trafficTokenName = "e2b_traffic_token"

const trafficHeader = "E2b-Traffic-Access-Token"

// checkTraffic enforces the traffic access token of a sandbox that has one
// and reports whether r may go on to the sandbox; when not, it answered r.
// The header, as E2B takes it, comes first; then the query parameter,
// answered with a redirect that sets the cookie; then the cookie.
func checkTraffic(w http.ResponseWriter, r *http.Request, id, token string) bool {
	if v, ok := r.Header[trafficHeader]; ok {
		return allowIf(w, id, len(v) > 0 && sameToken(v[0], token))
	}
	if v, ok := queryToken(r.URL.RawQuery); ok {
		if !sameToken(v, token) {
			return allowIf(w, id, false)
		}
		if isUpgrade(r) {
			// A websocket handshake cannot follow a redirect: the
			// parameter is taken as it is, and stripped on the way.
			return true
		}
		setTokenCookie(w, r, token)
		w.Header().Set("Location", withoutToken(r.URL))
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.WriteHeader(http.StatusSeeOther)
		return false
	}
	ok := false
	for _, c := range r.CookiesNamed(trafficTokenName) {
		// sameToken first, so every cookie is compared, the match or not.
		ok = sameToken(c.Value, token) || ok
	}
	return allowIf(w, id, ok)
}

// allowIf answers the refusal E2B gives a wrong or missing token unless ok.
func allowIf(w http.ResponseWriter, id string, ok bool) bool {
	if !ok {
		httperr.Write(w, httperr.Body{
			Code: http.StatusForbidden, SandboxID: id, Message: "missing or invalid traffic access token",
		})
	}
	return ok
}

func sameToken(got, want string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

func isUpgrade(r *http.Request) bool {
	return r.Header.Get("Upgrade") != "" && headerHasToken(r.Header, "Connection", "upgrade")
}

func headerHasToken(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// setTokenCookie sets the cookie for the host r came to only (no Domain),
// so it goes to this one port of this one sandbox; Secure when the client's
// connection is TLS, here or at the API role in front.
func setTokenCookie(w http.ResponseWriter, r *http.Request, token string) {
	http.SetCookie(w, &http.Cookie{
		Name:     trafficTokenName,
		Value:    token,
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https"),
		SameSite: http.SameSiteLaxMode,
	})
}

// queryToken finds the parameter in a raw query.
func queryToken(raw string) (string, bool) {
	for part := range strings.SplitSeq(raw, "&") {
		k, v, _ := strings.Cut(part, "=")
		if isTokenKey(k) {
			v, err := url.QueryUnescape(v)
			return v, err == nil
		}
	}
	return "", false
}

func isTokenKey(k string) bool {
	k, err := url.QueryUnescape(k)
	return err == nil && k == trafficTokenName
}

// stripQuery drops the parameter from a raw query and keeps the rest as it
// came, order and encoding alike.
func stripQuery(raw string) string {
	var kept []string
	for part := range strings.SplitSeq(raw, "&") {
		if k, _, _ := strings.Cut(part, "="); !isTokenKey(k) {
			kept = append(kept, part)
		}
	}
	return strings.Join(kept, "&")
}

// withoutToken is the redirect's target: u's path and query without the
// parameter, relative to the host so the browser stays on it.
func withoutToken(u *url.URL) string {
	// A path that starts with two slashes would name another host.
	p := "/" + strings.TrimLeft(u.EscapedPath(), "/")
	if q := stripQuery(u.RawQuery); q != "" {
		p += "?" + q
	}
	return p
}

// stripCookie drops the token's cookies from the Cookie headers and keeps
// the others as they came.
func stripCookie(h http.Header) {
	lines := h.Values("Cookie")
	if len(lines) == 0 {
		return
	}
	var kept []string
	for _, line := range lines {
		for c := range strings.SplitSeq(line, ";") {
			c = strings.TrimSpace(c)
			if name, _, _ := strings.Cut(c, "="); c != "" && strings.TrimSpace(name) != trafficTokenName {
				kept = append(kept, c)
			}
		}
	}
	h.Del("Cookie")
	if len(kept) > 0 {
		h.Set("Cookie", strings.Join(kept, "; "))
	}
}
