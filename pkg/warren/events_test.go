package warren

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/events"
)

// eventServer stands in for the events API: it checks what the SDK sends
// and answers as the server does.
func eventServer(t *testing.T) *Client {
	t.Helper()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := map[string]any{"version": "v1", "id": "e1", "type": EventKilled, "eventCategory": "lifecycle",
		"eventData": map[string]any{"reason": "timeout"}, "sandboxId": "sb1", "sandboxExecutionId": "x1",
		"sandboxTemplateId": "base", "sandboxTeamId": "default", "timestamp": at}
	hook := map[string]any{"id": "w1", "teamId": "default", "name": "ci", "url": "https://example.test/h", "enabled": true,
		"events": []string{EventKilled}, "createdAt": at, "updatedAt": at}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		reply := func(status int, v any) { w.WriteHeader(status); _ = json.NewEncoder(w).Encode(v) }
		switch r.Method + " " + r.URL.Path {
		case "GET /events/sandboxes":
			if q.Get("limit") != "5" || q.Get("orderAsc") != "true" || !slices.Equal(q["types"], []string{EventCreated, EventKilled}) || q.Get("offset") != "" {
				reply(400, map[string]any{"code": 400, "message": "query " + r.URL.RawQuery})
				return
			}
			reply(200, []any{ev})
		case "GET /events/sandboxes/sb1":
			reply(200, []any{ev})
		case "GET /events/sandboxes/nope":
			reply(404, map[string]any{"code": 404, "message": "sandbox \"nope\" not found"})
		case "POST /events/webhooks":
			var b map[string]any
			_ = json.Unmarshal(body, &b)
			if b["signatureSecret"] != "s" || b["enabled"] != true || b["url"] != "https://example.test/h" {
				reply(400, map[string]any{"code": 400, "message": "body " + string(body)})
				return
			}
			reply(201, hook)
		case "GET /events/webhooks":
			reply(200, []any{hook})
		case "PATCH /events/webhooks/w1":
			if string(body) != `{"enabled":false}` {
				reply(400, map[string]any{"code": 400, "message": "body " + string(body)})
				return
			}
			h := map[string]any{}
			for k, v := range hook {
				h[k] = v
			}
			h["enabled"] = false
			reply(200, h)
		case "GET /events/webhooks/w1/deliveries":
			reply(200, []any{map[string]any{"id": "d1", "webhookId": "w1", "eventId": "e1", "eventType": EventKilled,
				"status": "pending", "attempts": 2, "nextAttemptAt": at, "lastStatusCode": 503, "lastError": "the receiver answered 503",
				"createdAt": at, "updatedAt": at}})
		case "DELETE /events/webhooks/w1":
			w.WriteHeader(200)
		default:
			reply(404, map[string]any{"code": 404, "message": "no route"})
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{APIURL: srv.URL, APIKey: "e2b_test"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestEvents(t *testing.T) {
	t.Parallel()
	c := eventServer(t)
	evs, err := c.Events(t.Context(), EventOptions{Limit: 5, Oldest: true, Types: []string{EventCreated, EventKilled}})
	if err != nil {
		t.Fatalf("Events: %v", err)
	}
	if len(evs) != 1 || evs[0].ID != "e1" || evs[0].Data["reason"] != "timeout" || evs[0].ExecutionID != "x1" || evs[0].Time.Year() != 2026 {
		t.Fatalf("Events = %+v", evs)
	}
	if evs, err := c.SandboxEvents(t.Context(), "sb1", EventOptions{}); err != nil || len(evs) != 1 {
		t.Fatalf("SandboxEvents = %v, %v", evs, err)
	}
	if _, err := c.SandboxEvents(t.Context(), "nope", EventOptions{}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("SandboxEvents(unknown) = %v, want ErrNotFound", err)
	}
}

func TestWebhooks(t *testing.T) {
	t.Parallel()
	c := eventServer(t)
	h, err := c.CreateWebhook(t.Context(), WebhookSpec{Name: "ci", URL: "https://example.test/h", Events: []string{EventKilled}, Secret: "s"})
	if err != nil || h.ID != "w1" || !h.Enabled || !slices.Equal(h.Events, []string{EventKilled}) {
		t.Fatalf("CreateWebhook = %+v, %v", h, err)
	}
	if all, err := c.Webhooks(t.Context()); err != nil || len(all) != 1 || all[0].URL != "https://example.test/h" {
		t.Fatalf("Webhooks = %+v, %v", all, err)
	}
	off := false
	if h, err := c.UpdateWebhook(t.Context(), "w1", WebhookUpdate{Enabled: &off}); err != nil || h.Enabled {
		t.Fatalf("UpdateWebhook = %+v, %v", h, err)
	}
	ds, err := c.WebhookDeliveries(t.Context(), "w1", 0)
	if err != nil || len(ds) != 1 || ds[0].Attempts != 2 || ds[0].LastStatusCode != 503 || ds[0].NextAttempt.IsZero() ||
		!strings.Contains(ds[0].LastError, "503") {
		t.Fatalf("WebhookDeliveries = %+v, %v", ds, err)
	}
	if err := c.DeleteWebhook(t.Context(), "w1"); err != nil {
		t.Fatalf("DeleteWebhook: %v", err)
	}
	if _, err := c.Webhook(t.Context(), "gone"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Webhook(unknown) = %v, want ErrNotFound", err)
	}
}

// TestVerifyWebhookMatchesServer: the SDK checks the signature the server
// signs deliveries with (internal/events).
func TestVerifyWebhookMatchesServer(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ secret, body string }{
		{"s", `{}`}, {"secret-for-event-signature-verification", `{"type":"sandbox.lifecycle.created","eventData":null}`},
		{"ü:ñ", strings.Repeat("x", 1000)},
	} {
		sig := events.Sign(c.secret, []byte(c.body))
		if !VerifyWebhook(c.secret, []byte(c.body), sig) {
			t.Errorf("VerifyWebhook refuses the server's signature of %.20q", c.body)
		}
		if VerifyWebhook(c.secret+"x", []byte(c.body), sig) || VerifyWebhook(c.secret, []byte(c.body+" "), sig) {
			t.Errorf("VerifyWebhook accepts a wrong secret or body for %.20q", c.body)
		}
	}
}
