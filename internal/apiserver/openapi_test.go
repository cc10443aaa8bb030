package apiserver

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"

	"github.com/warren-sandbox/warren/api"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestOpenAPIMatchesRoutes: api/openapi.yaml is a valid OpenAPI 3
// document, describes every route the server has and no other, on one
// machine (or a node) and on a cluster's API role alike, and the server
// serves it at /openapi.yaml without a key.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc := loadOpenAPI(t)
	var described []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			described = append(described, method+" "+anyParams(path))
		}
	}
	sort.Strings(described)
	s := Starting().(*Server)
	roles := []struct {
		name string
		srv  *Server
	}{
		{"one machine", s},
		{"API role", New(Options{Store: sqlitetest.Open(t), Relay: &recordingRelay{}})},
	}
	for _, role := range roles {
		served := documentedRoutes(role.srv.Routes())
		for _, r := range served {
			if !slices.Contains(described, r) {
				t.Errorf("%s: the server has %s; openapi.yaml does not describe it", role.name, r)
			}
		}
		for _, r := range described {
			if !slices.Contains(served, r) {
				t.Errorf("%s: openapi.yaml describes %s; the server has no such route", role.name, r)
			}
		}
	}

	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.yaml", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK || !strings.HasPrefix(string(body), "openapi: 3") {
		t.Errorf("GET /openapi.yaml = %d %.40q", rec.Code, body)
	}
}

// documentedRoutes is patterns as api/openapi.yaml names them: without
// the cluster's internal routes, and parameters unnamed.
func documentedRoutes(patterns []string) []string {
	var out []string
	for _, p := range patterns {
		if internalRoute(p) {
			continue
		}
		// One pattern serves both: a literal segment would clash with
		// {id}/tags in the mux (see routeTable).
		if p == "GET /templates/{first}/{second}" {
			out = append(out, "GET /templates/aliases/{}", "GET /templates/{}/tags")
			continue
		}
		out = append(out, anyParams(p))
	}
	sort.Strings(out)
	return out
}

// internalRoute says whether pattern is one the cluster's nodes call on
// each other (docs/cluster.md), not part of the public API it describes.
func internalRoute(pattern string) bool {
	_, path, _ := strings.Cut(pattern, " ")
	return strings.HasPrefix(path, "/internal/")
}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// anyParams writes a route with its parameters unnamed: the document and
// the mux name them differently ({sandboxID}, {id}).
func anyParams(route string) string { return pathParam.ReplaceAllString(route, "{}") }

// loadOpenAPI loads and validates api/openapi.yaml.
func loadOpenAPI(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("loading openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid: %v", err)
	}
	return doc
}

// docCheck holds requests and answers to api/openapi.yaml.
type docCheck struct{ router routers.Router }

func newDocCheck(t *testing.T) *docCheck {
	t.Helper()
	doc := loadOpenAPI(t)
	doc.Servers = nil // match any host: the test server's port is random
	r, err := legacy.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	return &docCheck{router: r}
}

// check validates one exchange: the answer's status, headers and body
// against the operation's responses (an undocumented status fails) and,
// when the request should have been accepted, its parameters and body.
func (d *docCheck) check(t *testing.T, method, url, reqBody string, resp *http.Response, raw []byte, accepted bool) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(reqBody))
	if err != nil {
		t.Fatal(err)
	}
	route, params, err := d.router.FindRoute(req)
	if err != nil {
		t.Errorf("openapi.yaml has no operation for %s %s: %v", method, url, err)
		return
	}
	// The SDKs label their bodies; the test's requests do not, and the
	// server does not ask: take the one media type the operation has.
	if rb := route.Operation.RequestBody; reqBody != "" && rb != nil && len(rb.Value.Content) == 1 {
		for mt := range rb.Value.Content {
			req.Header.Set("Content-Type", mt)
		}
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
	ctx := context.Background()
	if accepted && !strings.Contains(resp.Request.URL.Path, "/files/") {
		if err := openapi3filter.ValidateRequest(ctx, in); err != nil {
			t.Errorf("openapi.yaml refuses a request the server accepts: %v", err)
		}
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: resp.StatusCode,
		Header: resp.Header, Body: io.NopCloser(bytes.NewReader(raw)), Options: opts}
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("the answer does not match openapi.yaml: %v", err)
	}
}

// TestOpenAPIErrorCodes: the Error schema's error_code lists every code
// warren sends (httperr.Codes), each with its status, and no other.
func TestOpenAPIErrorCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	prop := doc.Components.Schemas["Error"].Value.Properties["error_code"]
	if prop == nil || !slices.Contains(doc.Components.Schemas["Error"].Value.Required, "error_code") {
		t.Fatal("the Error schema has no required error_code")
	}
	desc := prop.Value.Description
	listed := map[string]int{} // "code (status" in the description
	for _, m := range regexp.MustCompile(`\b([a-z]+(?:_[a-z]+)*) \((\d{3})`).FindAllStringSubmatch(desc, -1) {
		listed[m[1]], _ = strconv.Atoi(m[2])
	}
	for code, statuses := range httperr.Codes {
		if !slices.Contains(statuses, listed[code]) {
			t.Errorf("error_code %q (status %v) is not described with its status in openapi.yaml", code, statuses)
		}
		delete(listed, code)
	}
	for code := range listed {
		t.Errorf("openapi.yaml describes error_code %q, which warren never sends", code)
	}
}
