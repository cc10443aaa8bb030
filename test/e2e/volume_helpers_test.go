package e2e

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// volumeCall calls srv's API with its admin key (for benchmarks too,
// which server.call does not take).
func volumeCall(t testing.TB, srv *server, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", srv.apiKey)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := harnessClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, data
}

// jsonField reads one string field of a JSON object.
func jsonField(t testing.TB, body []byte, field string) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	s, ok := m[field].(string)
	if !ok || s == "" {
		t.Fatalf("no %q in %s", field, body)
	}
	return s
}
