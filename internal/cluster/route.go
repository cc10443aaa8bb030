package cluster

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/proxy"
	"github.com/warren-sandbox/warren/internal/store"
)

// ServeHTTP routes sandbox traffic (by Host or headers) and signed file
// URLs to the sandbox's node, and serves the REST routes with apiserver's
// table, whose node-only routes come back here (the apiserver.Relay
// methods) once the key is checked.
func (a *API) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, port, ok, err := proxy.SandboxOf(r, a.opts.Domain)
	switch {
	case err != nil:
		httperr.Error(w, http.StatusBadRequest, err.Error())
	case ok:
		a.observe("sandbox traffic", w, r, func(w http.ResponseWriter, r *http.Request) { a.traffic(w, r, id, port) })
	case r.URL.Path == "/files" && r.URL.Query().Get("signature") != "":
		a.observe("signed file URL", w, r, a.signedFile)
	default:
		a.rest.ServeHTTP(w, r)
	}
}

// observe serves r with h, telling Options.ObserveRequest its route,
// status and duration.
func (a *API) observe(route string, w http.ResponseWriter, r *http.Request, h http.HandlerFunc) {
	if a.opts.ObserveRequest == nil {
		h(w, r)
		return
	}
	apiserver.Observed(w, r, h, func(status int, took time.Duration) {
		a.opts.ObserveRequest(route, status, took)
	})
}

// Health is nil once a node is alive to take creates.
func (a *API) Health(r *http.Request) error {
	alive, err := a.nodes.alive(r.Context())
	if err != nil {
		log.G(r.Context()).Warn("health: reading nodes", "err", err)
		return errdefs.New(errdefs.ErrUnavailable, "the store does not answer")
	}
	if len(alive) == 0 {
		return errdefs.New(errdefs.ErrUnavailable, "no node is alive to run sandboxes")
	}
	return nil
}

// Sandbox forwards a REST route of one sandbox to its node. The key and
// its scope were checked first, so that without a valid one an unknown
// sandbox is 401 as on one machine, not 404, and another team's is 404
// here as it would be there.
func (a *API) Sandbox(w http.ResponseWriter, r *http.Request, id string, sees func(team string) bool) error {
	node, err := a.ownerNode(r, id, sees)
	if errors.Is(err, errdefs.ErrUnavailable) && r.Method == http.MethodDelete && r.URL.Path == "/sandboxes/"+id {
		a.killOnDeadNode(w, r, id)
		return nil
	}
	if err != nil {
		return err
	}
	a.fwd.forward(w, r, node)
	return nil
}

// traffic forwards envd and port traffic to the sandbox's node, which
// checks tokens and routes it on as its own proxy does.
func (a *API) traffic(w http.ResponseWriter, r *http.Request, id string, port int) {
	node, err := a.ownerNode(r, id, nil)
	if err != nil {
		b := httperr.Body{Code: http.StatusBadGateway, ErrorCode: httperr.SandboxNotFound, Message: "The sandbox was not found", SandboxID: id}
		if !errdefs.IsNotFound(err) {
			b.ErrorCode, b.Message = httperr.BadGateway, err.Error()
		}
		httperr.Write(w, b)
		return
	}
	node.traffic, node.envd = true, port == wire.EnvdPort
	a.fwd.forward(w, r, node)
}

// ownerNode is where sandbox id's requests go: its node, if alive. With
// sees, a sandbox of a team it refuses is not found.
func (a *API) ownerNode(r *http.Request, id string, sees func(team string) bool) (*dest, error) {
	o, err := a.nodes.owner(r.Context(), id)
	if err == nil && sees != nil && !sees(o.team) {
		err = errdefs.New(errdefs.ErrNotFound, "another team's sandbox")
	}
	if err != nil {
		if errdefs.IsNotFound(err) {
			return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("sandbox %q not found", id))
		}
		return nil, fmt.Errorf("looking up sandbox %q: %w", id, err)
	}
	n, alive, err := a.nodes.node(r.Context(), o.node)
	if err != nil {
		return nil, err
	}
	if n == nil || !alive {
		a.nodes.forget(id) // it may be reaped by the next request
		return nil, errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf(
			"sandbox %q runs on node %q, which is not answering; if it stays silent its sandboxes are reported lost within %s",
			id, o.node, a.opts.DeadAfter))
	}
	return destOf(n)
}

// Builder forwards template builds, tags and image imports to the
// builder: the alive node that started first. It stays the builder while
// it lives, so a build's uploads, start and logs meet on one node; other
// nodes fetch a template's layers from it on first use.
func (a *API) Builder(w http.ResponseWriter, r *http.Request) error {
	alive, err := a.nodes.alive(r.Context())
	if err != nil {
		return errdefs.New(errdefs.ErrUnavailable, err.Error())
	}
	if len(alive) == 0 {
		return errdefs.New(errdefs.ErrUnavailable, "no node is alive to build templates")
	}
	d, err := destOf(alive[0])
	if err != nil {
		httperr.Error(w, http.StatusBadGateway, err.Error())
		return nil
	}
	a.fwd.forward(w, r, d)
	return nil
}

// DeleteTemplate sends DELETE /templates/{id} to the builder, unless the
// id names a snapshot: that goes to the node that holds its files, which
// frees them.
func (a *API) DeleteTemplate(w http.ResponseWriter, r *http.Request) error {
	snap, err := a.opts.Store.GetSnapshot(r.Context(), r.PathValue("id"))
	if err != nil {
		return a.Builder(w, r)
	}
	nodes, err := a.snapshotNodes(r.Context(), snap)
	if err != nil {
		return err
	}
	d, err := destOf(nodes[0])
	if err != nil {
		httperr.Error(w, http.StatusBadGateway, err.Error())
		return nil
	}
	a.fwd.forward(w, r, d)
	return nil
}

func destOf(n *store.Node) (*dest, error) {
	base, err := url.Parse(n.AdvertiseURL)
	if err != nil || base.Host == "" {
		return nil, errors.Join(errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("node %s has a bad address %q", n.Name, n.AdvertiseURL)), err)
	}
	return &dest{node: n.Name, base: base}, nil
}
