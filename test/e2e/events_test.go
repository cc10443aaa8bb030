package e2e

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// hookReceiver is a webhook endpoint on loopback that checks each
// delivery's signature and keeps the valid ones.
type hookReceiver struct {
	secret string
	mu     sync.Mutex
	got    []hookDelivery
	bad    []string // why a delivery was refused
}

type hookDelivery struct {
	webhookID, deliveryID, body string
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	if !warren.VerifyWebhook(h.secret, body, r.Header.Get(warren.WebhookSignatureHeader)) {
		h.bad = append(h.bad, "bad signature on "+string(body))
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	h.got = append(h.got, hookDelivery{r.Header.Get(warren.WebhookIDHeader), r.Header.Get(warren.WebhookDeliveryHeader), string(body)})
	w.WriteHeader(http.StatusNoContent)
}

func (h *hookReceiver) deliveries() ([]hookDelivery, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.got), slices.Clone(h.bad)
}

// TestEvents drives a real server's lifecycle events and webhooks with the
// Go SDK: a webhook on a loopback receiver (allowed by --webhook-allow;
// a private address stays refused), a sandbox created, given a new
// timeout, paused, resumed and killed; the events API lists each step in
// order after the kill, and the receiver gets each one once, signed, in
// the same order, with every delivery shown delivered. The webhook's
// delivery statistics and the Prometheus series say so too; a second
// webhook, on a receiver that answers 500, shows its failures there.
func TestEvents(t *testing.T) {
	cfg := loadConfig(t)
	rt := cfg.runtimes[len(cfg.runtimes)-1]
	s := launchServer(t, cfg, serverOpts{index: 191, runtime: rt, args: []string{"--webhook-allow", "127.0.0.0/8"}})
	c, err := warren.New(warren.Config{APIURL: s.url, APIKey: s.apiKey, SandboxURL: s.url, Domain: cfg.domain})
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	recv := &hookReceiver{secret: "e2e-secret"}
	rs := httptest.NewServer(recv)
	t.Cleanup(rs.Close)
	all := []string{warren.EventCreated, warren.EventUpdated, warren.EventPaused, warren.EventResumed, warren.EventSnapshotted, warren.EventKilled}
	hook, err := c.CreateWebhook(ctx, warren.WebhookSpec{Name: "e2e", URL: rs.URL + "/hook", Events: all, Secret: recv.secret})
	if err != nil {
		t.Fatalf("CreateWebhook: %v", err)
	}
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(broken.Close)
	failing, err := c.CreateWebhook(ctx, warren.WebhookSpec{Name: "broken", URL: broken.URL, Events: []string{warren.EventCreated}, Secret: "x"})
	if err != nil {
		t.Fatalf("CreateWebhook (broken): %v", err)
	}
	_, err = c.CreateWebhook(ctx, warren.WebhookSpec{URL: "http://10.1.2.3/hook", Events: all, Secret: "x"})
	var apiErr *warren.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusBadRequest || !strings.Contains(apiErr.Message, "internal address") {
		t.Errorf("a webhook on a private address = %v, want 400 (not allowed by --webhook-allow)", err)
	}

	sb, err := c.Create(ctx, "base", warren.CreateOptions{Timeout: 2 * time.Minute, Metadata: map[string]string{"test": "events"}})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	steps := []struct {
		name string
		do   func() error
	}{
		{"SetTimeout", func() error { return sb.SetTimeout(ctx, 5*time.Minute) }},
		{"Pause", func() error { return c.Pause(ctx, sb.ID, true) }},
		{"Resume", func() error { _, err := c.Connect(ctx, sb.ID, time.Minute); return err }},
		{"Kill", func() error { return sb.Kill(ctx) }},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
	want := []string{warren.EventCreated, warren.EventUpdated, warren.EventPaused, warren.EventResumed, warren.EventKilled}
	evs, err := c.SandboxEvents(ctx, sb.ID, warren.EventOptions{Oldest: true})
	if err != nil {
		t.Fatalf("SandboxEvents after the kill: %v", err)
	}
	checkEvents(t, evs, want, sb.ID)
	checkDeliveries(t, c, recv, hook.ID, evs)
	checkHookStats(t, c, hook.ID, len(evs))
	checkFailingHookStats(t, c, failing.ID)
	checkWebhookMetrics(t, s, len(evs))
}

func checkEvents(t *testing.T, evs []warren.Event, want []string, id string) {
	t.Helper()
	var types []string
	for _, e := range evs {
		types = append(types, e.Type)
		if e.SandboxID != id || e.TemplateID == "" || e.TeamID == "" || e.ExecutionID == "" {
			t.Errorf("event %+v lacks its sandbox, template, team or execution", e)
		}
	}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
	if md, _ := evs[0].Data["sandbox_metadata"].(map[string]any); md["test"] != "events" {
		t.Errorf("created eventData = %v, want the metadata", evs[0].Data)
	}
	if evs[len(evs)-1].Data["reason"] != "request" {
		t.Errorf("killed eventData = %v, want reason request", evs[len(evs)-1].Data)
	}
}

// checkDeliveries waits for the receiver to hold one signed delivery per
// event, in the events' order, and for the server to show them delivered.
func checkDeliveries(t *testing.T, c *warren.Client, recv *hookReceiver, hookID string, evs []warren.Event) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got []hookDelivery
	for {
		var bad []string
		got, bad = recv.deliveries()
		if len(bad) > 0 {
			t.Fatalf("deliveries refused by the receiver: %v", bad)
		}
		if len(got) >= len(evs) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(got) != len(evs) {
		t.Fatalf("receiver got %d deliveries, want %d", len(got), len(evs))
	}
	for i, d := range got {
		if d.webhookID != hookID || d.deliveryID == "" || !strings.Contains(d.body, `"id":"`+evs[i].ID+`"`) {
			t.Errorf("delivery %d = %+v, want event %s (%s) of webhook %s", i, d, evs[i].ID, evs[i].Type, hookID)
		}
	}
	ds, err := c.WebhookDeliveries(t.Context(), hookID, 0)
	if err != nil {
		t.Fatalf("WebhookDeliveries: %v", err)
	}
	for _, d := range ds {
		if d.Status != "delivered" || d.Attempts != 1 || d.LastStatusCode != http.StatusNoContent {
			t.Errorf("delivery %+v, want delivered at the first attempt", d)
		}
	}
}

// checkHookStats: a webhook whose n deliveries all went through at the
// first attempt shows them delivered, none pending or failed, a success
// rate of 1 and a last success but no failure.
func checkHookStats(t *testing.T, c *warren.Client, hookID string, n int) {
	t.Helper()
	h, err := c.Webhook(t.Context(), hookID)
	if err != nil || h.Stats == nil {
		t.Fatalf("Webhook: %+v, %v; want its stats", h, err)
	}
	st := *h.Stats
	if st.Delivered != n || st.Pending != 0 || st.Failed != 0 || st.Attempts != n || st.FailedAttempts != 0 ||
		st.SuccessRate != 1 || st.LastSuccess.IsZero() || !st.LastFailure.IsZero() || st.LastError != "" {
		t.Errorf("stats %+v, want %d delivered at the first attempt and no failure", st, n)
	}
	if st.MaxDuration < st.P95Duration || st.P95Duration < st.P50Duration || time.Since(st.Since) < 23*time.Hour {
		t.Errorf("stats %+v: durations out of order, or not over the default day", st)
	}
	hooks, err := c.Webhooks(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range hooks {
		if w.Stats == nil {
			t.Errorf("listed webhook %s without its stats", w.ID)
		}
	}
}

// checkFailingHookStats waits for the broken receiver's first failed
// attempt and checks the stats report it: pending (a retry is due), no
// success, the receiver's 500 as the last failure.
func checkFailingHookStats(t *testing.T, c *warren.Client, hookID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := c.Webhook(t.Context(), hookID)
		if err != nil || h.Stats == nil {
			t.Fatalf("Webhook: %+v, %v", h, err)
		}
		st := *h.Stats
		if st.FailedAttempts > 0 {
			if st.Pending != 1 || st.Delivered != 0 || st.Attempts != st.FailedAttempts || st.SuccessRate != -1 ||
				!st.LastSuccess.IsZero() || st.LastFailure.IsZero() || st.LastFailureStatusCode != http.StatusInternalServerError ||
				!strings.Contains(st.LastError, "500") {
				t.Errorf("stats %+v, want one pending delivery whose attempt got a 500", st)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failed attempt in the stats after 30 s: %+v", st)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// checkWebhookMetrics: /metrics counts the n deliveries and at least one
// failed attempt that will be retried, each also in the duration histogram.
func checkWebhookMetrics(t *testing.T, s *server, n int) {
	t.Helper()
	status, body, _ := send(t, s, "GET", "/metrics", "", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /metrics = %d %s", status, body)
	}
	text := string(body)
	for _, line := range []string{
		fmt.Sprintf("warren_webhook_deliveries_total{outcome=\"delivered\"} %d\n", n),
		fmt.Sprintf("warren_webhook_delivery_duration_seconds_count{outcome=\"delivered\"} %d\n", n),
		"warren_webhook_deliveries_total{outcome=\"retry\"} ",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("no %q in /metrics", line)
		}
	}
}
