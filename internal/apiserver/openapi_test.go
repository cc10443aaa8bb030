package apiserver

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/warren-sandbox/warren/api"
)

// TestOpenAPIMatchesRoutes: api/openapi.yaml is a valid OpenAPI 3
// document, describes every route the server has and no other, and the
// server serves it at /openapi.yaml without a key.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	doc, err := openapi3.NewLoader().LoadFromData(api.OpenAPI)
	if err != nil {
		t.Fatalf("loading openapi.yaml: %v", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("openapi.yaml is not valid: %v", err)
	}
	var described []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			described = append(described, method+" "+anyParams(path))
		}
	}
	s := Starting().(*Server)
	var served []string
	for _, p := range s.patterns {
		// One pattern serves both: a literal segment would clash with
		// {id}/tags in the mux (see routes).
		if p == "GET /templates/{first}/{second}" {
			served = append(served, "GET /templates/aliases/{}", "GET /templates/{}/tags")
			continue
		}
		served = append(served, anyParams(p))
	}
	sort.Strings(described)
	sort.Strings(served)
	for _, r := range served {
		if !slices.Contains(described, r) {
			t.Errorf("the server has %s; openapi.yaml does not describe it", r)
		}
	}
	for _, r := range described {
		if !slices.Contains(served, r) {
			t.Errorf("openapi.yaml describes %s; the server has no such route", r)
		}
	}

	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/openapi.yaml", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != http.StatusOK || !strings.HasPrefix(string(body), "openapi: 3") {
		t.Errorf("GET /openapi.yaml = %d %.40q", rec.Code, body)
	}
}

var pathParam = regexp.MustCompile(`\{[^}]*\}`)

// anyParams writes a route with its parameters unnamed: the document and
// the mux name them differently ({sandboxID}, {id}).
func anyParams(route string) string { return pathParam.ReplaceAllString(route, "{}") }
