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

// deleteVolumes deletes every volume of srv (a server of the test's own),
// so that none is left mounted on the host when it stops; a failed test
// leaves none behind either.
func deleteVolumes(t testing.TB, srv *server) {
	t.Helper()
	select {
	case <-srv.exited:
		return // stopped on purpose: its successor cleans up
	default:
	}
	status, body := volumeCall(t, srv, http.MethodGet, "/volumes", "")
	var vols []struct {
		ID string `json:"volumeID"`
	}
	if err := json.Unmarshal(body, &vols); status != http.StatusOK || err != nil {
		t.Errorf("GET /volumes = %d %s: %v", status, body, err)
		return
	}
	for _, v := range vols {
		if status, body := volumeCall(t, srv, http.MethodDelete, "/volumes/"+v.ID, ""); status != http.StatusNoContent {
			t.Errorf("DELETE /volumes/%s = %d %s", v.ID, status, body)
		}
	}
}
