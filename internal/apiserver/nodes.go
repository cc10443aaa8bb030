package apiserver

import (
	"fmt"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/sandbox"
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
	deadAfter := s.nodeDeadAfter()
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
// authenticate with the cluster secret (clusterOnly), so no API key
// reads a layer (it may hold any team's files).
func (s *Server) serveLayer(w http.ResponseWriter, r *http.Request) {
	if s.opts.Layers == nil {
		writeError(w, http.StatusNotFound, "this server shares no layers: it is not a cluster node")
		return
	}
	s.opts.Layers.ServeHTTP(w, r)
}

// deleteNode serves DELETE /nodes/{name}: a dead node's record goes, with
// the records of the sandboxes it held (paused ones wait for their node;
// a machine gone for good would keep them listed for ever), each with a
// killed event, reason node-lost. A live node is refused: it would carry
// on running what the store no longer has.
func (s *Server) deleteNode(w http.ResponseWriter, r *http.Request) {
	if !isAdmin(r) {
		writeError(w, http.StatusForbidden, "only the admin key (WARREN_API_KEY) forgets nodes")
		return
	}
	ctx, name := r.Context(), r.PathValue("name")
	n, err := s.opts.Store.GetNode(ctx, name)
	if err != nil {
		fail(w, r, err)
		return
	}
	if now := time.Now(); n.Alive(now, s.nodeDeadAfter()) {
		fail(w, r, errdefs.New(errdefs.ErrConflict, fmt.Sprintf(
			"node %q is alive (its last heartbeat is %s old): stop it first", name, now.Sub(n.HeartbeatAt).Round(time.Second))))
		return
	}
	sbs, err := s.opts.Store.ListSandboxesOnNode(ctx, name)
	if err != nil {
		fail(w, r, fmt.Errorf("listing the node's sandboxes: %w", err))
		return
	}
	for _, sb := range sbs {
		if err := s.opts.Store.DeleteSandbox(ctx, sb.ID); err != nil {
			if errdefs.IsNotFound(err) {
				continue
			}
			fail(w, r, fmt.Errorf("forgetting sandbox %s: %w", sb.ID, err))
			return
		}
		if s.opts.Events != nil {
			s.opts.Events.Record(ctx, events.KilledOnNode(sb, sandbox.KillNodeLost))
		}
	}
	if err := s.opts.Store.DeleteNode(ctx, name); err != nil && !errdefs.IsNotFound(err) {
		fail(w, r, fmt.Errorf("forgetting node %s: %w", name, err))
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// nodeDeadAfter is Options.NodeDeadAfter or its default.
func (s *Server) nodeDeadAfter() time.Duration {
	if s.opts.NodeDeadAfter <= 0 {
		return DefaultNodeDeadAfter
	}
	return s.opts.NodeDeadAfter
}
