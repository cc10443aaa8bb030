package apiserver

// eventCases drive the events and webhook routes after the sandbox cases
// made, paused and killed sandboxes ({sb1} was killed): a webhook is
// registered, a sandbox created and killed owes it two deliveries.
func eventCases() []routeCase {
	const (
		created, killed = "sandbox.lifecycle.created", "sandbox.lifecycle.killed"
		hookBody        = `{"name":"ci","url":"https://hooks.example.test/e2b","events":["` + created + `","` + killed + `"],"signatureSecret":"s3cret"}`
	)
	return []routeCase{
		{route: "GET /events/sandboxes", name: "by type", method: "GET", path: "/events/sandboxes?limit=100&types=" + created + "," + killed, status: 200, contains: `"type":"` + killed + `"`},
		{route: "GET /events/sandboxes", name: "limit too big", method: "GET", path: "/events/sandboxes?limit=101", status: 400, contains: "limit must be between 1 and 100"},
		{route: "GET /events/sandboxes", name: "unknown type", method: "GET", path: "/events/sandboxes?types=sandbox.lifecycle.exploded", status: 400, contains: "unknown event type"},
		{route: "GET /events/sandboxes/{sandboxID}", name: "a killed sandbox", method: "GET", path: "/events/sandboxes/{sb1}?orderAsc=true", status: 200, contains: `"sandboxId":"{sb1}"`},
		{route: "GET /events/sandboxes/{sandboxID}", name: "unknown", method: "GET", path: "/events/sandboxes/" + unknownID, status: 404, contains: unknownID},
		{route: "POST /events/webhooks", name: "register", method: "POST", path: "/events/webhooks", body: hookBody, status: 201, contains: `"enabled":true`, save: saveField("hook", "id")},
		{route: "POST /events/webhooks", name: "not http", method: "POST", path: "/events/webhooks", body: `{"url":"ftp://hooks.example.test/","events":["` + created + `"],"signatureSecret":"s"}`, status: 400, contains: "http:// or https://"},
		{route: "POST /events/webhooks", name: "no secret", method: "POST", path: "/events/webhooks", body: `{"url":"https://hooks.example.test/","events":["` + created + `"],"signatureSecret":""}`, status: 400, contains: "signatureSecret"},
		{route: "POST /sandboxes", name: "for the webhook", method: "POST", path: "/sandboxes", body: `{"templateID":"base","timeout":60}`, status: 201, contains: `"sandboxID"`, save: saveField("sbw", "sandboxID")},
		{route: "DELETE /sandboxes/{id}", name: "for the webhook", method: "DELETE", path: "/sandboxes/{sbw}", status: 204},
		{route: "GET /events/webhooks", name: "list", method: "GET", path: "/events/webhooks", status: 200, contains: `"id":"{hook}"`},
		{route: "GET /events/webhooks", name: "stats of the deliveries owed", method: "GET", path: "/events/webhooks", status: 200, contains: `"failedAttempts":0,"pending":2,"since":`},
		{route: "GET /events/webhooks", name: "bad window", method: "GET", path: "/events/webhooks?window=forever", status: 400, contains: "window must be a duration"},
		{route: "GET /events/webhooks", name: "no key", method: "GET", path: "/events/webhooks", noKey: true, status: 401, contains: "API key"},
		{route: "GET /events/webhooks/{webhookID}", name: "get", method: "GET", path: "/events/webhooks/{hook}", status: 200, contains: "https://hooks.example.test/e2b"},
		{route: "GET /events/webhooks/{webhookID}", name: "unknown", method: "GET", path: "/events/webhooks/" + unknownID, status: 404, contains: unknownID},
		{route: "GET /events/webhooks/{webhookID}", name: "stats over an hour", method: "GET", path: "/events/webhooks/{hook}?window=1h", status: 200, contains: `"windowSeconds":3600}`},
		{route: "GET /events/webhooks/{webhookID}", name: "window too short", method: "GET", path: "/events/webhooks/{hook}?window=1s", status: 400, contains: "between 1m0s and 720h"},
		{route: "GET /events/webhooks/{webhookID}/deliveries", name: "pending", method: "GET", path: "/events/webhooks/{hook}/deliveries", status: 200, contains: `"eventType":"` + killed + `","id"`},
		{route: "GET /events/webhooks/{webhookID}/deliveries", name: "bad limit", method: "GET", path: "/events/webhooks/{hook}/deliveries?limit=0", status: 400, contains: "limit must be between"},
		{route: "PATCH /events/webhooks/{webhookID}", name: "disable", method: "PATCH", path: "/events/webhooks/{hook}", body: `{"enabled":false,"name":"ci2"}`, status: 200, contains: `"enabled":false`},
		{route: "PATCH /events/webhooks/{webhookID}", name: "no events", method: "PATCH", path: "/events/webhooks/{hook}", body: `{"events":[]}`, status: 400, contains: "at least one event type"},
		{route: "DELETE /events/webhooks/{webhookID}", name: "delete", method: "DELETE", path: "/events/webhooks/{hook}", status: 200},
		{route: "DELETE /events/webhooks/{webhookID}", name: "deleted already", method: "DELETE", path: "/events/webhooks/{hook}", status: 404, contains: "not found"},
	}
}
