package apiserver

import (
	"encoding/json"
	"net/url"
	"strings"
)

const (
	unknownID = "doesnotexist0000"
	filesHash = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
)

// routeCases is TestEveryRoute's script: sandboxes first (create, inspect,
// change, snapshot, fork, pause, kill), then templates (request a build,
// upload its files, start it, watch and cancel it, a build that finishes,
// tags), then images.
func routeCases() []routeCase {
	var cs []routeCase
	cs = append(cs, sandboxCases()...)
	cs = append(cs, sandboxStateCases()...)
	cs = append(cs, templateCases()...)
	cs = append(cs, buildCases()...)
	cs = append(cs, miscCases()...)
	cs = append(cs, eventCases()...)
	cs = append(cs, usageCases()...)
	cs = append(cs, nodeCases()...)
	cs = append(cs, dashboardCases()...)
	cs = append(cs, volumeRouteCases()...)
	return cs
}

func sandboxCases() []routeCase {
	return []routeCase{
		{route: "GET /metrics", name: "admin", method: "GET", path: "/metrics", admin: true, status: 200, contains: "process_open_fds"},
		{route: "GET /metrics", name: "a team's key", method: "GET", path: "/metrics", status: 403, contains: "only the admin key"},
		{route: "GET /metrics", name: "no key", method: "GET", path: "/metrics", noKey: true, status: 401, contains: "API key"},
		{route: "GET /health", name: "ready", method: "GET", path: "/health", noKey: true, status: 200, contains: "OK"},
		{route: "GET /openapi.yaml", name: "no key needed", method: "GET", path: "/openapi.yaml", noKey: true, status: 200, contains: "openapi: 3"},
		{route: "POST /sandboxes", name: "create", method: "POST", path: "/sandboxes", body: `{"templateID":"base","timeout":60}`, status: 201, contains: `"envdVersion"`, save: saveField("sb1", "sandboxID")},
		{route: "POST /sandboxes", name: "empty body", method: "POST", path: "/sandboxes", status: 400, contains: "body is required"},
		{route: "POST /v2/sandboxes", name: "create", method: "POST", path: "/v2/sandboxes", body: `{"templateID":"base","timeout":60,"metadata":{"k":"v"}}`, status: 201, contains: `"sandboxID"`, save: saveField("sb", "sandboxID")},
		{route: "POST /v2/sandboxes", name: "no template", method: "POST", path: "/v2/sandboxes", body: `{"timeout":10}`, status: 400, contains: "templateID is required"},
		{route: "GET /sandboxes", name: "list", method: "GET", path: "/sandboxes", status: 200, contains: "{sb}"},
		{route: "GET /sandboxes", name: "no key", method: "GET", path: "/sandboxes", noKey: true, status: 401, contains: "missing API key"},
		{route: "GET /v2/sandboxes", name: "list by metadata", method: "GET", path: "/v2/sandboxes?state=running&metadata=" + url.QueryEscape("k=v"), status: 200, contains: "{sb}"},
		{route: "GET /v2/sandboxes", name: "bad state", method: "GET", path: "/v2/sandboxes?state=dead", status: 400, contains: "state"},
		{route: "GET /sandboxes/metrics", name: "batch", method: "GET", path: "/sandboxes/metrics?sandbox_ids={sb}," + unknownID, status: 200, contains: `"sandboxes"`},
		{route: "GET /sandboxes/metrics", name: "too many ids", method: "GET", path: "/sandboxes/metrics?sandbox_ids=" + strings.Repeat("x,", 101), status: 400, contains: "at most 100"},
		{route: "GET /sandboxes/{id}", name: "get", method: "GET", path: "/sandboxes/{sb}", status: 200, contains: `"state":"running"`},
		{route: "GET /sandboxes/{id}", name: "unknown", method: "GET", path: "/sandboxes/" + unknownID, status: 404, contains: unknownID},
		{route: "POST /sandboxes/{id}/timeout", name: "set", method: "POST", path: "/sandboxes/{sb}/timeout", body: `{"timeout":120}`, status: 204},
		{route: "POST /sandboxes/{id}/timeout", name: "missing", method: "POST", path: "/sandboxes/{sb}/timeout", body: `{}`, status: 400, contains: "timeout is required"},
		{route: "POST /sandboxes/{id}/refreshes", name: "refresh", method: "POST", path: "/sandboxes/{sb}/refreshes", body: `{"duration":60}`, status: 204},
		{route: "POST /sandboxes/{id}/refreshes", name: "too long", method: "POST", path: "/sandboxes/{sb}/refreshes", body: `{"duration":4000}`, status: 400, contains: "duration"},
		{route: "POST /sandboxes/{id}/connect", name: "running", method: "POST", path: "/sandboxes/{sb}/connect", body: `{"timeout":60}`, status: 200, contains: "{sb}"},
		{route: "POST /sandboxes/{id}/connect", name: "no timeout", method: "POST", path: "/sandboxes/{sb}/connect", body: `{}`, status: 400, contains: "timeout is required"},
		{route: "POST /v2/sandboxes/{id}/connect", name: "running", method: "POST", path: "/v2/sandboxes/{sb}/connect", body: `{}`, status: 200, contains: "{sb}"},
		{route: "POST /v2/sandboxes/{id}/connect", name: "unknown", method: "POST", path: "/v2/sandboxes/" + unknownID + "/connect", body: `{}`, status: 404, contains: unknownID},
		{route: "GET /sandboxes/{id}/metrics", name: "samples", method: "GET", path: "/sandboxes/{sb}/metrics", status: 200, contains: "["},
		{route: "GET /sandboxes/{id}/metrics", name: "bad start", method: "GET", path: "/sandboxes/{sb}/metrics?start=yesterday", status: 400, contains: "start must be a unix time"},
		{route: "GET /sandboxes/{id}/logs", name: "logs", method: "GET", path: "/sandboxes/{sb}/logs", status: 200, contains: `"logs"`},
		{route: "GET /sandboxes/{id}/logs", name: "unknown", method: "GET", path: "/sandboxes/" + unknownID + "/logs", status: 404, contains: unknownID},
		{route: "GET /v2/sandboxes/{id}/logs", name: "logs", method: "GET", path: "/v2/sandboxes/{sb}/logs?direction=backward&limit=10", status: 200, contains: `"logs"`},
		{route: "GET /v2/sandboxes/{id}/logs", name: "limit too big", method: "GET", path: "/v2/sandboxes/{sb}/logs?limit=100000", status: 400, contains: "limit may be at most"},
		{route: "PUT /sandboxes/{id}/network", name: "deny a range", method: "PUT", path: "/sandboxes/{sb}/network", body: `{"denyOut":["10.0.0.0/8"]}`, status: 204},
		{route: "PUT /sandboxes/{id}/network", name: "not an address", method: "PUT", path: "/sandboxes/{sb}/network", body: `{"denyOut":["nope"]}`, status: 400, contains: "not an IP address or CIDR"},
	}
}

func sandboxStateCases() []routeCase {
	return []routeCase{
		{route: "POST /sandboxes/{id}/snapshots", name: "snapshot", method: "POST", path: "/sandboxes/{sb}/snapshots", body: `{"name":"routes-snap"}`, status: 201, contains: "routes-snap", save: saveField("snap", "snapshotID")},
		{route: "POST /sandboxes/{id}/snapshots", name: "unknown", method: "POST", path: "/sandboxes/" + unknownID + "/snapshots", body: `{}`, status: 404, contains: unknownID},
		{route: "GET /snapshots", name: "list", method: "GET", path: "/snapshots", status: 200, contains: "{snap}"},
		{route: "GET /snapshots", name: "bad limit", method: "GET", path: "/snapshots?limit=-1", status: 400, contains: "limit"},
		{route: "POST /sandboxes/{id}/fork", name: "fork", method: "POST", path: "/sandboxes/{sb}/fork", body: `{"count":1}`, status: 201, contains: `"sandbox"`, save: saveFork},
		{route: "POST /sandboxes/{id}/fork", name: "unknown", method: "POST", path: "/sandboxes/" + unknownID + "/fork", body: `{"count":1}`, status: 404, contains: unknownID},
		{route: "POST /sandboxes/{id}/pause", name: "pause", method: "POST", path: "/sandboxes/{sb}/pause", status: 204},
		{route: "POST /sandboxes/{id}/pause", name: "already paused", method: "POST", path: "/sandboxes/{sb}/pause", status: 409, contains: "{sb}"},
		{route: "POST /sandboxes/{id}/resume", name: "resume", method: "POST", path: "/sandboxes/{sb}/resume", body: `{"timeout":60}`, status: 201, contains: "{sb}"},
		{route: "POST /sandboxes/{id}/resume", name: "not paused", method: "POST", path: "/sandboxes/{sb}/resume", body: `{"timeout":60}`, status: 409, contains: "{sb}"},
		{route: "DELETE /sandboxes/{id}", name: "kill", method: "DELETE", path: "/sandboxes/{sb1}", status: 204},
		{route: "DELETE /sandboxes/{id}", name: "killed already", method: "DELETE", path: "/sandboxes/{sb1}", status: 404, contains: "{sb1}"},
		{route: "DELETE /sandboxes/{id}", name: "kill the fork", method: "DELETE", path: "/sandboxes/{fork}", status: 204},
		{route: "DELETE /templates/{id}", name: "delete the snapshot", method: "DELETE", path: "/templates/{snap}", status: 204},
		{route: "DELETE /templates/{id}", name: "built-in", method: "DELETE", path: "/templates/base", status: 409, contains: "base"},
		{route: "DELETE /templates/{id}", name: "unknown", method: "DELETE", path: "/templates/" + unknownID, status: 404, contains: "not found"},
	}
}

func saveFork(vars map[string]string, body []byte) {
	var out []struct {
		Sandbox *struct {
			ID string `json:"sandboxID"`
		} `json:"sandbox"`
	}
	_ = json.Unmarshal(body, &out)
	if len(out) == 1 && out[0].Sandbox != nil {
		vars["fork"] = out[0].Sandbox.ID
	}
}

func templateCases() []routeCase {
	return []routeCase{
		{route: "GET /templates", name: "list", method: "GET", path: "/templates", status: 200, contains: `"base"`},
		{route: "GET /templates", name: "wrong key", method: "GET", path: "/templates?", noKey: true, status: 401, contains: "API key"},
		{route: "GET /v2/templates", name: "list", method: "GET", path: "/v2/templates", status: 200, contains: `"base"`},
		{route: "GET /v2/templates", name: "no key", method: "GET", path: "/v2/templates", noKey: true, status: 401, contains: "API key"},
		{route: "GET /templates/{id}", name: "get", method: "GET", path: "/templates/base", status: 200, contains: `"base"`},
		{route: "GET /templates/{id}", name: "unknown", method: "GET", path: "/templates/" + unknownID, status: 404, contains: unknownID},
		{route: "GET /templates/{first}/{second}", name: "alias", method: "GET", path: "/templates/aliases/base", status: 200, contains: `"base"`},
		{route: "GET /templates/{first}/{second}", name: "unknown alias", method: "GET", path: "/templates/aliases/nope", status: 404, contains: "nope"},
		{route: "POST /templates", name: "removed", method: "POST", path: "/templates", body: `{}`, status: 410, contains: "POST /v3/templates"},
		{route: "POST /templates/{templateID}", name: "removed", method: "POST", path: "/templates/abc", body: `{}`, status: 410, contains: "upgrade"},
		{route: "POST /templates/{templateID}/builds/{buildID}", name: "removed", method: "POST", path: "/templates/abc/builds/b1", status: 410, contains: "upgrade"},
		{route: "POST /v2/templates", name: "removed", method: "POST", path: "/v2/templates", body: `{}`, noKey: true, status: 410, contains: "upgrade"},
		{route: "/", name: "no route", method: "GET", path: "/nope", status: 404, contains: "no route"},
	}
}

// buildCases request a build, upload its files, start it (its RUN waits),
// watch and cancel it; then a build without steps that finishes, whose
// tags are moved.
func buildCases() []routeCase {
	return []routeCase{
		{route: "POST /v3/templates", name: "request", method: "POST", path: "/v3/templates", body: `{"name":"routes-tpl","tags":["v1"]}`, status: 202, contains: `"buildID"`, save: saveBuild},
		{route: "POST /v3/templates", name: "too many cpus", method: "POST", path: "/v3/templates", body: `{"name":"routes-tpl","cpuCount":64}`, status: 400, contains: "at most 4"},
		{route: "GET /templates/{templateID}/files/{hash}", name: "ask to upload", method: "GET", path: "/templates/{tpl}/files/" + filesHash, status: 201, contains: `"present":false`, save: saveUpload},
		{route: "GET /templates/{templateID}/files/{hash}", name: "unknown template", method: "GET", path: "/templates/" + unknownID + "/files/" + filesHash, status: 404, contains: unknownID},
		{route: "PUT /templates/{templateID}/files/{hash}", name: "upload", method: "PUT", path: "{upload}", body: "not checked until a COPY reads it", noKey: true, status: 201},
		{route: "PUT /templates/{templateID}/files/{hash}", name: "bad signature", method: "PUT", path: "/templates/{tpl}/files/" + filesHash + "?expires=99999999999&signature=00", noKey: true, status: 403, contains: "upload link"},
		{route: "POST /v2/templates/{templateID}/builds/{buildID}", name: "start", method: "POST", path: "/v2/templates/{tpl}/builds/{build}", body: `{"fromTemplate":"base","steps":[{"type":"RUN","args":["sleep 1000"]}]}`, status: 202},
		{route: "POST /v2/templates/{templateID}/builds/{buildID}", name: "started already", method: "POST", path: "/v2/templates/{tpl}/builds/{build}", body: `{"fromTemplate":"base","steps":[]}`, status: 409, contains: "started already"},
		{route: "GET /templates/{templateID}/builds/{buildID}/status", name: "building", method: "GET", path: "/templates/{tpl}/builds/{build}/status", status: 200, contains: `"status":"building"`},
		{route: "GET /templates/{templateID}/builds/{buildID}/status", name: "limit too big", method: "GET", path: "/templates/{tpl}/builds/{build}/status?limit=500", status: 400, contains: "limit"},
		{route: "GET /templates/{templateID}/builds/{buildID}/logs", name: "logs", method: "GET", path: "/templates/{tpl}/builds/{build}/logs", status: 200, contains: `"logs"`},
		{route: "GET /templates/{templateID}/builds/{buildID}/logs", name: "unknown build", method: "GET", path: "/templates/{tpl}/builds/" + unknownID + "/logs", status: 404, contains: unknownID},
		{route: "POST /templates/{templateID}/builds/{buildID}/cancel", name: "cancel", method: "POST", path: "/templates/{tpl}/builds/{build}/cancel", status: 204},
		{route: "POST /templates/{templateID}/builds/{buildID}/cancel", name: "unknown build", method: "POST", path: "/templates/{tpl}/builds/" + unknownID + "/cancel", status: 404, contains: unknownID},
		{route: "GET /templates/{first}/{second}", name: "tags", method: "GET", path: "/templates/{tpl}/tags", status: 200, contains: "["},
		{route: "POST /v3/templates", name: "request another", method: "POST", path: "/v3/templates", body: `{"name":"routes-ok","tags":["v1"]}`, status: 202, contains: `"buildID"`, save: saveBuild},
		{route: "POST /v2/templates/{templateID}/builds/{buildID}", name: "start a build without steps", method: "POST", path: "/v2/templates/{tpl}/builds/{build}", body: `{"fromTemplate":"base","steps":[]}`, status: 202},
		{route: "GET /templates/{templateID}/builds/{buildID}/status", name: "ready", method: "GET", path: "/templates/{tpl}/builds/{build}/status", status: 200, contains: `"status":"ready"`, poll: true},
		{route: "POST /templates/tags", name: "tag", method: "POST", path: "/templates/tags", body: `{"target":"routes-ok:v1","tags":["v2"]}`, status: 201, contains: `"v2"`},
		{route: "DELETE /templates/tags", name: "untag", method: "DELETE", path: "/templates/tags", body: `{"name":"routes-ok","tags":["v2"]}`, status: 204},
		{route: "POST /templates/tags", name: "no tags", method: "POST", path: "/templates/tags", body: `{"target":"routes-tpl"}`, status: 400, contains: "at least one tag"},
		{route: "DELETE /templates/tags", name: "no name", method: "DELETE", path: "/templates/tags", body: `{"tags":["v1"]}`, status: 400, contains: "name and at least one tag"},
	}
}

func saveBuild(vars map[string]string, body []byte) {
	saveField("tpl", "templateID")(vars, body)
	saveField("build", "buildID")(vars, body)
}

// saveUpload keeps the path and query of the signed upload link.
func saveUpload(vars map[string]string, body []byte) {
	var m struct {
		URL string `json:"url"`
	}
	_ = json.Unmarshal(body, &m)
	if u, err := url.Parse(m.URL); err == nil {
		vars["upload"] = u.RequestURI()
	}
}

func miscCases() []routeCase {
	return []routeCase{
		{route: "POST /images", name: "import", method: "POST", path: "/images", body: "an image tarball", status: 201, contains: "example.test/img:1"},
		{route: "POST /images", name: "no key", method: "POST", path: "/images", body: "x", noKey: true, status: 401, contains: "API key"},
		{route: "GET /images", name: "list", method: "GET", path: "/images", status: 200, contains: "example.test/img:1"},
		{route: "GET /images", name: "no key", method: "GET", path: "/images", noKey: true, status: 401, contains: "API key"},
		{route: "GET /api-keys", name: "list", method: "GET", path: "/api-keys", status: 200, contains: `"name":"test"`},
		{route: "GET /api-keys", name: "no key", method: "GET", path: "/api-keys", noKey: true, status: 401, contains: "API key"},
		{route: "POST /api-keys", name: "create", method: "POST", path: "/api-keys", body: `{"name":"ci","scopes":["sandboxes:read"],"ttlSeconds":3600}`, status: 201, contains: `"key":"e2b_`, save: saveField("keyid", "id")},
		{route: "POST /api-keys", name: "no name", method: "POST", path: "/api-keys", body: `{"name":""}`, status: 400, contains: "name must be"},
		{route: "POST /api-keys", name: "unknown scope", method: "POST", path: "/api-keys", body: `{"name":"x","scopes":["root"]}`, status: 400, contains: "unknown scope"},
		{route: "PATCH /api-keys/{apiKeyID}", name: "rename", method: "PATCH", path: "/api-keys/{keyid}", body: `{"name":"ci2"}`, status: 200},
		{route: "PATCH /api-keys/{apiKeyID}", name: "unknown", method: "PATCH", path: "/api-keys/" + unknownID, body: `{"name":"x"}`, status: 404, contains: unknownID},
		{route: "DELETE /api-keys/{apiKeyID}", name: "revoke", method: "DELETE", path: "/api-keys/{keyid}", status: 204},
		{route: "DELETE /api-keys/{apiKeyID}", name: "revoked already", method: "DELETE", path: "/api-keys/{keyid}", status: 404, contains: "not found"},
	}
}
