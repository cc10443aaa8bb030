package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/telemetry"
)

// TestMetricsListener: --metrics-listen serves /metrics without a key and
// nothing else; off, it opens nothing; a taken address fails at start.
func TestMetricsListener(t *testing.T) {
	t.Parallel()
	addr, stop, err := serveMetrics(t.Context(), "127.0.0.1:0", telemetry.New().Handler())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	tests := []struct {
		path     string
		status   int
		contains string
	}{
		{"/metrics", 200, "go_goroutines"},
		{"/sandboxes", 404, ""},
	}
	for _, tt := range tests {
		resp, err := http.Get("http://" + addr + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status || !strings.Contains(string(body), tt.contains) {
			t.Errorf("GET %s = %d %.200s, want %d with %q", tt.path, resp.StatusCode, body, tt.status, tt.contains)
		}
	}
	if _, _, err := serveMetrics(t.Context(), addr, telemetry.New().Handler()); err == nil || !strings.Contains(err.Error(), "--metrics-listen") {
		t.Errorf("a second listener on %s: %v, want an error naming the flag", addr, err)
	}
	if bound, stopOff, err := serveMetrics(t.Context(), "", nil); err != nil || bound != "" {
		t.Errorf("off: %q, %v", bound, err)
	} else {
		stopOff()
	}
}
