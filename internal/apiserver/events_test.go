package apiserver

import (
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/store"
)

// call sends a request and returns its status and body.
func call(t *testing.T, f *routeFixture, method, path, body, key string) (int, string) {
	t.Helper()
	resp := do(t, f.srv, method, path, body, key)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// TestEventsAndWebhooksAreTeamScoped: another team's key sees none of a
// team's events or webhooks and cannot change them; the admin key sees
// all; secrets are never answered; scopes apply.
func TestEventsAndWebhooksAreTeamScoped(t *testing.T) {
	t.Parallel()
	f := newRouteFixture(t)
	admin := f.addKey(t, apikey.Spec{Name: "admin", Admin: true})
	other := f.addKey(t, apikey.Spec{Name: "other", Team: "other"})
	tplOnly := f.addKey(t, apikey.Spec{Name: "tpl", Scopes: []string{apikey.ScopeTemplatesRead}})
	readOnly := f.addKey(t, apikey.Spec{Name: "ro", Scopes: []string{apikey.ScopeSandboxesRead}})

	status, body := call(t, f, "POST", "/sandboxes", `{"templateID":"base","timeout":60}`, f.key)
	var sb struct{ SandboxID string }
	if status != 201 || json.Unmarshal([]byte(body), &sb) != nil {
		t.Fatalf("create = %d %s", status, body)
	}
	status, body = call(t, f, "POST", "/events/webhooks", `{"url":"https://hooks.example.test/","events":["sandbox.lifecycle.killed"],"signatureSecret":"s3cret-value"}`, f.key)
	var hook struct{ ID string }
	if status != 201 || json.Unmarshal([]byte(body), &hook) != nil || strings.Contains(body, "s3cret-value") {
		t.Fatalf("register = %d %s (the secret must not come back)", status, body)
	}
	for _, c := range []struct {
		key, method, path, body string
		status                  int
		has, lacks              string
	}{
		{other, "GET", "/events/sandboxes", "", 200, "[]", sb.SandboxID},
		{other, "GET", "/events/sandboxes/" + sb.SandboxID, "", 404, "not found", ""},
		{other, "GET", "/events/webhooks", "", 200, "[]", hook.ID},
		{other, "GET", "/events/webhooks/" + hook.ID, "", 404, "not found", ""},
		{other, "PATCH", "/events/webhooks/" + hook.ID, `{"enabled":false}`, 404, "not found", ""},
		{other, "DELETE", "/events/webhooks/" + hook.ID, "", 404, "not found", ""},
		{other, "GET", "/events/webhooks/" + hook.ID + "/deliveries", "", 404, "not found", ""},
		{admin, "GET", "/events/sandboxes", "", 200, sb.SandboxID, ""},
		{admin, "GET", "/events/webhooks", "", 200, hook.ID, "s3cret-value"},
		{f.key, "GET", "/events/sandboxes/" + sb.SandboxID, "", 200, `"sandboxTeamId":"default"`, ""},
		{f.key, "GET", "/events/webhooks/" + hook.ID, "", 200, hook.ID, "s3cret-value"},
		{tplOnly, "GET", "/events/sandboxes", "", 403, "sandboxes:read", ""},
		{readOnly, "POST", "/events/webhooks", `{}`, 403, "sandboxes:write", ""},
		{f.key, "POST", "/events/webhooks", `{"url":"https://hooks.example.test/","events":["sandbox.lifecycle.exploded"],"signatureSecret":"x"}`, 400, "unknown event type", ""},
	} {
		status, body := call(t, f, c.method, c.path, c.body, c.key)
		if status != c.status || !strings.Contains(body, c.has) || (c.lacks != "" && strings.Contains(body, c.lacks)) {
			t.Errorf("%s %s = %d %s; want %d with %q and without %q", c.method, c.path, status, body, c.status, c.has, c.lacks)
		}
	}
}

// TestEventJSONMatchesWebhookBody: the API's rest.SandboxEvent and the
// body webhooks receive (events.Body) are the same document.
func TestEventJSONMatchesWebhookBody(t *testing.T) {
	t.Parallel()
	for _, e := range []*store.Event{
		{ID: "e1", Type: store.EventKilled, SandboxID: "sb", TemplateID: "base", BuildID: "b", ExecutionID: "x", TeamID: "t",
			Data: []byte(`{"reason":"timeout","execution":{"vcpu_count":2,"memory_mb":512}}`), Timestamp: time.Now()},
		{ID: "e2", Type: store.EventCreated, SandboxID: "sb", TemplateID: "base", Timestamp: time.Now()},
	} {
		j, err := toEventJSON(e)
		if err != nil {
			t.Fatal(err)
		}
		api, _ := json.Marshal(j)
		hook, err := events.Body(e)
		if err != nil {
			t.Fatal(err)
		}
		var a, h map[string]any
		if err := json.Unmarshal(api, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(hook, &h); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, h) {
			t.Errorf("event %s:\n API     %s\n webhook %s", e.ID, api, hook)
		}
	}
}

// TestWebhookURLNeedsTheServer: without an event service, registering is
// 501, not a webhook that never fires.
func TestWebhookURLNeedsTheServer(t *testing.T) {
	t.Parallel()
	s := &Server{}
	if err := s.checkWebhookURL("https://example.test/"); statusOf(err) != http.StatusNotImplemented {
		t.Fatalf("checkWebhookURL without webhooks = %v, want 501", err)
	}
}
