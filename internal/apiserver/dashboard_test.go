package apiserver

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// The dashboard's files are text the document describes as strings.
func init() {
	for _, ct := range []string{"text/html", "text/javascript", "text/css", "image/svg+xml"} {
		openapi3filter.RegisterBodyDecoder(ct, openapi3filter.PlainBodyDecoder)
	}
}

// dashboardCases: the dashboard's files need no key; a file it does not
// have is 404 with E2B's error body. internal/dashboard tests the rest.
func dashboardCases() []routeCase {
	return []routeCase{
		{route: "GET /dashboard/{file...}", name: "page", method: "GET", path: "/dashboard/index.html", noKey: true, status: 200, contains: "<title>warren dashboard</title>"},
		{route: "GET /dashboard/{file...}", name: "stylesheet", method: "GET", path: "/dashboard/app.css", noKey: true, status: 200, contains: "--accent"},
		{route: "GET /dashboard/{file...}", name: "missing", method: "GET", path: "/dashboard/nope.js", noKey: true, status: 404, contains: "no dashboard file"},
	}
}

// TestDashboardMounted: /dashboard/ is the page, also while warren starts
// (its API calls then answer 503), and /dashboard redirects to it.
func TestDashboardMounted(t *testing.T) {
	t.Parallel()
	s := Starting()
	for _, tc := range []struct {
		path     string
		status   int
		location string
	}{
		{"/dashboard/", http.StatusOK, ""},
		{"/dashboard/js/main.js", http.StatusOK, ""},
		{"/dashboard", http.StatusTemporaryRedirect, "/dashboard/"},
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.status || rec.Header().Get("Location") != tc.location {
			t.Errorf("GET %s = %d (Location %q), want %d (%q)", tc.path, rec.Code, rec.Header().Get("Location"), tc.status, tc.location)
		}
	}
}
