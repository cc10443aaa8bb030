package apiserver

import (
	"fmt"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/store"
)

// DefaultNodeDeadAfter is Options.NodeDeadAfter when unset.
const DefaultNodeDeadAfter = 30 * time.Second

// listNodes serves GET /nodes: every registered node with its state by
// the age of its heartbeat. Nodes, their addresses and capacity are the
// operator's business, so only the admin key reads them.
func (s *Server) listNodes(w http.ResponseWriter, r *http.Request) {
	if !isAdmin(r) {
		writeError(w, http.StatusForbidden, "only the admin key (WARREN_API_KEY) reads /nodes")
		return
	}
	nodes, err := s.opts.Store.ListNodes(r.Context())
	if err != nil {
		fail(w, r, fmt.Errorf("listing nodes: %w", err))
		return
	}
	deadAfter := s.opts.NodeDeadAfter
	if deadAfter <= 0 {
		deadAfter = DefaultNodeDeadAfter
	}
	now := time.Now()
	out := make([]rest.Node, 0, len(nodes))
	for _, n := range nodes {
		out = append(out, nodeJSON(n, now, deadAfter))
	}
	writeJSON(w, http.StatusOK, out)
}

func nodeJSON(n *store.Node, now time.Time, deadAfter time.Duration) rest.Node {
	state := rest.NodeStateDead
	if n.Alive(now, deadAfter) {
		state = rest.NodeStateAlive
	}
	tpls := n.Templates
	if tpls == nil {
		tpls = []string{}
	}
	return rest.Node{
		Name: n.Name, AdvertiseURL: n.AdvertiseURL, State: state,
		CPUCount: n.CPUs, MemoryMB: n.MemoryMB, DiskSizeMB: n.DiskMB,
		RunningSandboxes: n.Sandboxes, ReservedCPUs: n.ReservedCPUs, ReservedMemoryMB: n.ReservedMemoryMB,
		Templates: tpls, Version: n.Version, StartedAt: n.StartedAt, HeartbeatAt: n.HeartbeatAt,
	}
}

// serveLayer serves GET /internal/layers/{key}: a template layer of this
// node, for another node of the cluster that lacks it. Nodes
// authenticate with the cluster's admin key, so no other key reads a
// layer (it may hold any team's files).
func (s *Server) serveLayer(w http.ResponseWriter, r *http.Request) {
	if !isAdmin(r) {
		writeError(w, http.StatusForbidden, "only the cluster's admin key (WARREN_API_KEY) reads layers")
		return
	}
	if s.opts.Layers == nil {
		writeError(w, http.StatusNotFound, "this server shares no layers: it is not a cluster node")
		return
	}
	s.opts.Layers.ServeHTTP(w, r)
}
