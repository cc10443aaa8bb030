package warren

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// TestDeprecatedNames: each old name sends the request its new name
// sends, so a caller moving to the new names changes nothing on the wire.
func TestDeprecatedNames(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.RequestURI()+" "+readAll(r))
		mu.Unlock()
		w.WriteHeader(http.StatusTeapot) // every call fails alike; only the request matters
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{APIURL: srv.URL, APIKey: "k", Domain: "test", Retry: RetryOptions{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	t0, t1 := time.Unix(1700000000, 0), time.Unix(1700003600, 0)
	type call func(context.Context)
	tests := []struct {
		name     string
		old, new call
	}{
		{"Pause", func(ctx context.Context) { _ = c.Pause(ctx, "sb", false) }, func(ctx context.Context) { _ = c.PauseSandbox(ctx, "sb", PauseOptions{DiskOnly: true}) }},
		{"Pause memory", func(ctx context.Context) { _ = c.Pause(ctx, "sb", true) }, func(ctx context.Context) { _ = c.PauseSandbox(ctx, "sb", PauseOptions{}) }},
		{"Info", func(ctx context.Context) { _, _ = c.Info(ctx, "sb") }, func(ctx context.Context) { _, _ = c.GetInfo(ctx, "sb") }},
		{"Metrics", func(ctx context.Context) { _, _ = c.Metrics(ctx, "sb", t0, t1) }, func(ctx context.Context) { _, _ = c.GetMetrics(ctx, "sb", t0, t1) }},
		{"Logs", func(ctx context.Context) { _, _ = c.Logs(ctx, "sb", LogOptions{Limit: 5}) }, func(ctx context.Context) { _, _ = c.GetLogs(ctx, "sb", LogOptions{Limit: 5}) }},
		{"Snapshots", func(ctx context.Context) { _, _ = c.Snapshots(ctx, "sb") }, func(ctx context.Context) { _, _ = c.ListSnapshots(ctx, "sb") }},
		{"Events", func(ctx context.Context) { _, _ = c.Events(ctx, EventOptions{}) }, func(ctx context.Context) { _, _ = c.ListEvents(ctx, EventOptions{}) }},
		{"SandboxEvents", func(ctx context.Context) { _, _ = c.SandboxEvents(ctx, "sb", EventOptions{}) }, func(ctx context.Context) { _, _ = c.ListSandboxEvents(ctx, "sb", EventOptions{}) }},
		{"Nodes", func(ctx context.Context) { _, _ = c.Nodes(ctx) }, func(ctx context.Context) { _, _ = c.ListNodes(ctx) }},
		{"TemplateTags", func(ctx context.Context) { _, _ = c.TemplateTags(ctx, "tpl") }, func(ctx context.Context) { _, _ = c.ListTemplateTags(ctx, "tpl") }},
		{"TemplateFiles", func(ctx context.Context) { _, _ = c.TemplateFiles(ctx, "tpl", "h") }, func(ctx context.Context) { _, _ = c.GetTemplateFiles(ctx, "tpl", "h") }},
		{"BuildStatus", func(ctx context.Context) { _, _ = c.BuildStatus(ctx, "tpl", "b", 3) }, func(ctx context.Context) { _, _ = c.GetBuildStatus(ctx, "tpl", "b", 3) }},
		{"BuildLogs", func(ctx context.Context) { _, _ = c.BuildLogs(ctx, "tpl", "b", BuildLogsOptions{}) }, func(ctx context.Context) { _, _ = c.GetBuildLogs(ctx, "tpl", "b", BuildLogsOptions{}) }},
		{"Usage", func(ctx context.Context) { _, _ = c.Usage(ctx, t0, t1, time.Minute) }, func(ctx context.Context) { _, _ = c.GetUsage(ctx, t0, t1, time.Minute) }},
		{"TeamUsage", func(ctx context.Context) { _, _ = c.TeamUsage(ctx, "tm", t0, t1, time.Minute) }, func(ctx context.Context) { _, _ = c.GetTeamUsage(ctx, "tm", t0, t1, time.Minute) }},
		{"Webhooks", func(ctx context.Context) { _, _ = c.Webhooks(ctx) }, func(ctx context.Context) { _, _ = c.ListWebhooks(ctx) }},
		{"Webhook", func(ctx context.Context) { _, _ = c.Webhook(ctx, "wh") }, func(ctx context.Context) { _, _ = c.GetWebhook(ctx, "wh") }},
		{"WebhookDeliveries", func(ctx context.Context) { _, _ = c.WebhookDeliveries(ctx, "wh", 7) }, func(ctx context.Context) { _, _ = c.ListWebhookDeliveries(ctx, "wh", 7) }},
	}
	for _, tc := range tests {
		// Sequential: each name sends exactly one request, and the pair's
		// two are the same.
		mu.Lock()
		n0 := len(seen)
		mu.Unlock()
		tc.old(t.Context())
		tc.new(t.Context())
		mu.Lock()
		if got := seen[n0:]; len(got) != 2 || got[0] != got[1] {
			t.Errorf("%s: old and new names sent %q", tc.name, got)
		}
		mu.Unlock()
	}
}

func readAll(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}
