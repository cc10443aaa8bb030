package apiserver

import (
	"net/http"
	"sync"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/dashboard"
)

// Relay is how a cluster's API role (internal/cluster) serves the routes
// that only a node can answer: it has no sandboxes and no builder, and
// sends those requests on to the node that has them. The route table,
// the key check and the error body stay this package's on both roles;
// a Relay only replaces the handler a route ends in. A method's error is
// answered here, as a handler's is; one that wrote its answer returns nil.
type Relay interface {
	// Health is nil when the cluster can take creates (a node is alive).
	Health(r *http.Request) error
	// Create places a create on a node with room.
	Create(w http.ResponseWriter, r *http.Request) error
	// BatchMetrics asks every node for its sandboxes' latest samples.
	BatchMetrics(w http.ResponseWriter, r *http.Request) error
	// Sandbox sends a route of sandbox id to the node that runs it; a
	// sandbox of a team sees refuses is not found.
	Sandbox(w http.ResponseWriter, r *http.Request, id string, sees func(team string) bool) error
	// Builder sends template builds, tags and image imports to the node
	// that builds.
	Builder(w http.ResponseWriter, r *http.Request) error
	// DeleteTemplate sends DELETE /templates/{id} to the node holding it.
	DeleteTemplate(w http.ResponseWriter, r *http.Request) error
	// Volume sends a /volumes or /volumecontent route to a node that
	// serves volumes: every node sees every volume on the shared storage.
	Volume(w http.ResponseWriter, r *http.Request) error
}

// relayed names the Relay method that serves a route on the API role;
// local routes are served by this package there too, from the store.
type relayed int

const (
	local relayed = iota
	relayHealth
	relayCreate
	relayMetrics
	relaySandbox
	relayBuilder
	relayTemplateDelete
	relayVolume
)

// access is what a route asks of a request before its handler runs: an
// API key holding a scope, nothing, the cluster's signature, or a
// volume's token.
type access string

const (
	open   access = ""          // no key: public, or the handler checks a signature of its own
	signed access = "(cluster)" // the cluster's signature, no key (clusterOnly)
	// volToken: a volume's own token as the bearer, no API key: the
	// content API's SDK client holds only that (volumeToken).
	volToken access = "(volume token)"

	sbRead   = access(apikey.ScopeSandboxesRead)
	sbWrite  = access(apikey.ScopeSandboxesWrite)
	tplRead  = access(apikey.ScopeTemplatesRead)
	tplWrite = access(apikey.ScopeTemplatesWrite)
	keyAdmin = access(apikey.ScopeKeys)
)

// ownership is the check, after the key's, that the team owns the object
// a route names.
type ownership int

const (
	anyone ownership = iota
	ownsSandbox
	ownsTemplate
)

// route is one row of the REST API: the one table both roles serve.
type route struct {
	pattern string
	access  access
	own     ownership
	serve   func(s *Server, w http.ResponseWriter, r *http.Request)
	relay   relayed
}

// routeTable is every route of the REST API. api/openapi.yaml describes
// the same set (TestOpenAPIMatchesRoutes).
var routeTable = []route{
	{"GET /health", open, anyone, (*Server).health, relayHealth},
	{"GET /openapi.yaml", open, anyone, (*Server).openAPI, local},
	// The web dashboard's files need no key; the page sends the user's.
	{"GET /dashboard/{file...}", open, anyone, (*Server).dashboardFile, local},

	{"POST /sandboxes", sbWrite, anyone, (*Server).createV1, relayCreate},
	{"POST /v2/sandboxes", sbWrite, anyone, (*Server).createV2, relayCreate},
	{"GET /sandboxes", sbRead, anyone, (*Server).listV1, local},
	{"GET /v2/sandboxes", sbRead, anyone, (*Server).listV2, local},
	{"GET /sandboxes/metrics", sbRead, anyone, (*Server).batchMetrics, relayMetrics},
	{"GET /sandboxes/{id}", sbRead, ownsSandbox, (*Server).getSandbox, relaySandbox},
	{"DELETE /sandboxes/{id}", sbWrite, ownsSandbox, (*Server).killSandbox, relaySandbox},
	{"POST /sandboxes/{id}/timeout", sbWrite, ownsSandbox, (*Server).setTimeout, relaySandbox},
	{"POST /sandboxes/{id}/refreshes", sbWrite, ownsSandbox, (*Server).refresh, relaySandbox},
	{"POST /sandboxes/{id}/connect", sbWrite, ownsSandbox, (*Server).connectV1, relaySandbox},
	{"POST /v2/sandboxes/{id}/connect", sbWrite, ownsSandbox, (*Server).connectV2, relaySandbox},
	{"POST /sandboxes/{id}/pause", sbWrite, ownsSandbox, (*Server).pause, relaySandbox},
	{"POST /sandboxes/{id}/resume", sbWrite, ownsSandbox, (*Server).resume, relaySandbox},
	{"GET /sandboxes/{id}/metrics", sbRead, ownsSandbox, (*Server).metrics, relaySandbox},
	{"GET /sandboxes/{id}/logs", sbRead, ownsSandbox, (*Server).sandboxLogsV1, relaySandbox},
	{"GET /v2/sandboxes/{id}/logs", sbRead, ownsSandbox, (*Server).sandboxLogsV2, relaySandbox},
	{"POST /sandboxes/{id}/snapshots", sbWrite, ownsSandbox, (*Server).createSnapshot, relaySandbox},
	{"POST /sandboxes/{id}/fork", sbWrite, ownsSandbox, (*Server).fork, relaySandbox},
	{"PUT /sandboxes/{id}/network", sbWrite, ownsSandbox, (*Server).updateNetwork, relaySandbox},
	{"GET /snapshots", sbRead, anyone, (*Server).listSnapshots, local},

	{"DELETE /templates/{id}", tplWrite, anyone, (*Server).deleteTemplate, relayTemplateDelete},
	{"GET /templates", tplRead, anyone, (*Server).listTemplates, local},
	{"GET /v2/templates", tplRead, anyone, (*Server).listTemplates, local},
	// One pattern for both: /templates/aliases/tags would match two.
	{"GET /templates/{first}/{second}", tplRead, anyone, (*Server).templateSub, local},
	{"GET /templates/{id}", tplRead, anyone, (*Server).getTemplate, local},
	// Builds run where their uploaded files are: on the builder node.
	{"POST /v3/templates", tplWrite, anyone, (*Server).requestBuild, relayBuilder},
	{"GET /templates/{templateID}/files/{hash}", tplWrite, ownsTemplate, (*Server).templateFiles, relayBuilder},
	// The upload link's own signature authorizes it.
	{"PUT /templates/{templateID}/files/{hash}", open, anyone, (*Server).uploadFiles, relayBuilder},
	{"POST /v2/templates/{templateID}/builds/{buildID}", tplWrite, ownsTemplate, (*Server).startBuild, relayBuilder},
	{"GET /templates/{templateID}/builds/{buildID}/status", tplRead, ownsTemplate, (*Server).buildStatus, relayBuilder},
	{"GET /templates/{templateID}/builds/{buildID}/logs", tplRead, ownsTemplate, (*Server).buildLogs, relayBuilder},
	{"POST /templates/{templateID}/builds/{buildID}/cancel", tplWrite, ownsTemplate, (*Server).cancelBuild, relayBuilder},
	{"POST /templates/tags", tplWrite, anyone, (*Server).assignTags, relayBuilder},
	{"DELETE /templates/tags", tplWrite, anyone, (*Server).removeTags, relayBuilder},
	{"POST /images", tplWrite, anyone, (*Server).importImage, relayBuilder},
	{"GET /images", tplRead, anyone, (*Server).listImages, relayBuilder},

	// Volumes are sandbox data: the sandbox scopes govern them.
	{"GET /volumes", sbRead, anyone, (*Server).listVolumes, relayVolume},
	{"POST /volumes", sbWrite, anyone, (*Server).createVolume, relayVolume},
	{"GET /volumes/{volumeID}", sbRead, anyone, (*Server).getVolume, relayVolume},
	{"DELETE /volumes/{volumeID}", sbWrite, anyone, (*Server).deleteVolume, relayVolume},
	{"GET /volumecontent/{volumeID}/dir", volToken, anyone, (*Server).listVolumeDir, relayVolume},
	{"POST /volumecontent/{volumeID}/dir", volToken, anyone, (*Server).makeVolumeDir, relayVolume},
	{"GET /volumecontent/{volumeID}/path", volToken, anyone, (*Server).statVolumePath, relayVolume},
	{"PATCH /volumecontent/{volumeID}/path", volToken, anyone, (*Server).updateVolumePath, relayVolume},
	{"DELETE /volumecontent/{volumeID}/path", volToken, anyone, (*Server).removeVolumePath, relayVolume},
	{"GET /volumecontent/{volumeID}/file", volToken, anyone, (*Server).readVolumeFile, relayVolume},
	{"PUT /volumecontent/{volumeID}/file", volToken, anyone, (*Server).writeVolumeFile, relayVolume},

	{"GET /api-keys", keyAdmin, anyone, (*Server).listKeys, local},
	{"POST /api-keys", keyAdmin, anyone, (*Server).createKey, local},
	{"PATCH /api-keys/{apiKeyID}", keyAdmin, anyone, (*Server).updateKey, local},
	{"DELETE /api-keys/{apiKeyID}", keyAdmin, anyone, (*Server).deleteKey, local},

	{"GET /metrics", sbRead, anyone, (*Server).serveMetrics, local},
	{"GET /events/sandboxes", sbRead, anyone, (*Server).listEvents, local},
	{"GET /events/sandboxes/{sandboxID}", sbRead, anyone, (*Server).sandboxEvents, local},
	{"GET /events/webhooks", sbRead, anyone, (*Server).listWebhooks, local},
	{"POST /events/webhooks", sbWrite, anyone, (*Server).createWebhook, local},
	{"GET /events/webhooks/{webhookID}", sbRead, anyone, (*Server).getWebhook, local},
	{"PATCH /events/webhooks/{webhookID}", sbWrite, anyone, (*Server).updateWebhook, local},
	{"DELETE /events/webhooks/{webhookID}", sbWrite, anyone, (*Server).deleteWebhook, local},
	{"GET /events/webhooks/{webhookID}/deliveries", sbRead, anyone, (*Server).webhookDeliveries, local},
	{"GET /usage", sbRead, anyone, (*Server).usage, local},
	{"GET /nodes", sbRead, anyone, (*Server).listNodes, local},
	{"GET /admission", sbRead, anyone, (*Server).getAdmission, local},
	{"DELETE /nodes/{name}", sbWrite, anyone, (*Server).deleteNode, local},
	{"GET /internal/layers/{key}", signed, anyone, (*Server).serveLayer, local},
}

// routes registers the table, the removed endpoints (410, not routes)
// and the catch-all.
func (s *Server) routes() {
	for _, rt := range routeTable {
		s.handle(rt.pattern, s.guard(rt.access, s.handlerOf(rt)))
	}
	for _, pattern := range removedEndpoints {
		s.mux.HandleFunc(pattern, s.gone)
	}
	s.mux.HandleFunc("/", s.noRoute)
}

// guard checks what a route asks of the request (access) before h.
func (s *Server) guard(a access, h http.HandlerFunc) http.Handler {
	switch a {
	case open:
		return h
	case signed:
		return s.clusterOnly(h)
	case volToken:
		return s.volumeToken(h)
	default:
		return s.authenticate(string(a), h)
	}
}

// handlerOf is the handler rt ends in: on the API role (a Relay set) its
// Relay method, else this package's with its ownership check.
func (s *Server) handlerOf(rt route) http.HandlerFunc {
	if s.opts.Relay != nil && rt.relay != local {
		return s.relayHandler(rt.relay)
	}
	h := func(w http.ResponseWriter, r *http.Request) { rt.serve(s, w, r) }
	switch rt.own {
	case ownsSandbox:
		return s.ownSandbox(h)
	case ownsTemplate:
		return s.ownTemplate(h)
	}
	return h
}

// relayHandler serves a route with the Relay method kind names, answering
// the error it returns as any handler's.
func (s *Server) relayHandler(kind relayed) http.HandlerFunc {
	rl := s.opts.Relay
	var do func(w http.ResponseWriter, r *http.Request) error
	switch kind {
	case relayHealth:
		return s.health
	case relayCreate:
		do = rl.Create
	case relayMetrics:
		do = rl.BatchMetrics
	case relaySandbox:
		do = func(w http.ResponseWriter, r *http.Request) error {
			return rl.Sandbox(w, r, r.PathValue("id"), func(team string) bool { return owns(r, team) })
		}
	case relayBuilder:
		do = rl.Builder
	case relayTemplateDelete:
		do = rl.DeleteTemplate
	case relayVolume:
		do = rl.Volume
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if err := do(w, r); err != nil {
			fail(w, r, err)
		}
	}
}

// Routes returns the patterns this server serves, as registered: the same
// table on every role.
func (s *Server) Routes() []string { return append([]string(nil), s.patterns...) }

// dashboardFiles is built once: the embedded files and their hashes.
var dashboardFiles = sync.OnceValue(func() http.Handler { return dashboard.New() })

func (s *Server) dashboardFile(w http.ResponseWriter, r *http.Request) {
	dashboardFiles().ServeHTTP(w, r)
}
