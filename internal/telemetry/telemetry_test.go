package telemetry

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandlerServesRuntimeMetrics(t *testing.T) {
	rec := httptest.NewRecorder()
	New().Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, name := range []string{"go_goroutines ", "process_open_fds ", "go_memstats_heap_alloc_bytes "} {
		if !strings.Contains(string(body), "\n"+name) {
			t.Errorf("no %s in:\n%.2000s", name, body)
		}
	}
}
