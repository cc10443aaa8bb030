// Package cluster is the API role of `warren serve --role=api`: a
// stateless front for many nodes that share one store. It places each
// create on a node with room, forwards every request that concerns one
// sandbox (REST routes, envd and port traffic, signed file URLs) to the
// node that runs it, answers lists and the team's records from the store,
// and reports the sandboxes of a node that stopped heartbeating as killed.
// It has no route table of its own: it serves apiserver's, with the same
// key check and error body as a node, and answers the routes only a node
// can answer as that table's apiserver.Relay.
//
// Nothing here is kept that the store does not have: any number of API
// processes can run side by side, and one restarting loses nothing.
package cluster

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/store"
)

// Recorder records lifecycle events (*events.Service).
type Recorder interface {
	Record(ctx context.Context, e *store.Event)
}

// Options configure an API.
type Options struct {
	Store store.Store
	// REST configures the REST API's server, the same route table, key
	// check and error body as a node's: New sets its Store, its Records
	// (Sandboxes over Store, for the lists the store answers) and its
	// Relay (the API, for the routes a node answers).
	REST apiserver.Options
	// Domain is the sandbox domain of Host routing (`<port>-<id>.<domain>`),
	// the same on the API and on every node.
	Domain string
	// DeadAfter: a node whose heartbeat is older is dead; its running
	// sandboxes are reported killed (reason node-lost).
	DeadAfter time.Duration
	// ReapEvery is how often the nodes' heartbeats are read when no
	// request reads them (the heartbeat interval). The reaper also wakes
	// at each node's deadline, so a lost sandbox leaves the lists DeadAfter
	// after its node's last heartbeat, or up to ReapEvery later when the
	// node's clock is ahead of this one's (see directory).
	ReapEvery time.Duration
	// Events records the node-lost kills; nil records none.
	Events Recorder
	// ObserveRequest, when set, is told each request's route, status and
	// duration: sandbox traffic and signed file URLs (REST.ObserveRequest
	// observes the REST routes).
	ObserveRequest func(route string, status int, took time.Duration)
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Cluster signs what goes to nodes with the cluster secret, which
	// they require in place of the client's key (forwarder).
	Cluster *clusterauth.Signer
}

// API is the API role's HTTP handler.
type API struct {
	opts  Options
	nodes *directory
	place *placer
	fwd   *forwarder
	// rest is the REST API, relaying to nodes through this API.
	rest *apiserver.Server
	// lastVolumeNode is the node that answered the last volume route
	// (Volume asks it first): a string.
	lastVolumeNode atomic.Value
}

// New returns the API role's handler; Run reaps dead nodes' sandboxes.
func New(opts Options) *API {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	dir := newDirectory(opts.Store, opts.DeadAfter, opts.Now)
	a := &API{opts: opts, nodes: dir, place: newPlacer(dir, opts.Now), fwd: newForwarder(opts.Cluster)}
	rest := opts.REST
	rest.Store, rest.Records, rest.Relay = opts.Store, Sandboxes{Store: opts.Store}, a
	a.rest = apiserver.New(rest)
	return a
}

// Routes returns the REST patterns the API serves: apiserver's table.
func (a *API) Routes() []string { return a.rest.Routes() }

// Run reaps until ctx ends.
func (a *API) Run(ctx context.Context) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		a.reap(ctx)
		t.Reset(a.nextReap())
	}
}

// nextReap is how long the reaper sleeps: ReapEvery, or less when a node's
// deadline comes first, so that its sandboxes go at that deadline rather
// than at the tick after it.
func (a *API) nextReap() time.Duration {
	wait := a.opts.ReapEvery
	if dl, ok := a.nodes.nextDeadline(); ok {
		wait = min(wait, max(dl.Sub(a.opts.Now()), 0))
	}
	return wait
}
