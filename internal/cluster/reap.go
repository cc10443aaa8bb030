package cluster

import (
	"context"
	"fmt"
	"net/http"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/events"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// reap reports the running sandboxes of every dead node killed: their
// records leave the store (so lists and lookups stop showing them) and a
// killed event says node-lost. Paused sandboxes parked on shared storage
// go to a live node that shares it (handOver); other paused ones stay:
// their state is on the node's disk, and they resume when it comes back. A node that was
// only cut off finds its reaped sandboxes gone from the store on its next
// heartbeat and destroys them; one that restarts does so as it
// reconciles. Several API processes may reap at once: a record is
// deleted once, and only the one that deleted it records the event.
func (a *API) reap(ctx context.Context) {
	nodes, err := a.nodes.all(ctx)
	if err != nil {
		if ctx.Err() == nil {
			log.G(ctx).Warn("reaper: listing nodes", "err", err)
		}
		return
	}
	for _, n := range nodes {
		if !a.nodes.isAlive(n) {
			if cut := a.fwd.cut(n.Name); cut > 0 {
				log.G(ctx).Warn("ended requests waiting on a dead node", "node", n.Name, "requests", cut)
			}
			a.reapNode(ctx, n)
		}
	}
}

// reapNode reports dead node n's running sandboxes killed.
func (a *API) reapNode(ctx context.Context, n *store.Node) {
	sbs, err := a.opts.Store.ListSandboxesOnNode(ctx, n.Name)
	if err != nil {
		log.G(ctx).Warn("reaper: listing a dead node's sandboxes", "node", n.Name, "err", err)
		return
	}
	for _, sb := range sbs {
		if sb.State == store.SandboxPaused && sb.Parked && n.ShareID != "" {
			a.handOver(ctx, n, sb)
			continue
		}
		if sb.State != store.SandboxRunning {
			continue
		}
		// Read again just before: a node that came back may have paused it
		// since the list (the store has no conditional delete).
		if cur, err := a.opts.Store.GetSandbox(ctx, sb.ID); err != nil || cur.State != store.SandboxRunning || cur.Node != n.Name {
			continue
		}
		if err := a.opts.Store.DeleteSandbox(ctx, sb.ID); err != nil {
			if !errdefs.IsNotFound(err) {
				log.G(ctx).Warn("reaper: forgetting a lost sandbox", "sandbox", sb.ID, "err", err)
			}
			continue
		}
		a.nodes.forget(sb.ID)
		log.G(ctx).Warn("sandbox lost with its node", "sandbox", sb.ID, "node", n.Name,
			"last_heartbeat", n.HeartbeatAt)
		a.record(ctx, events.KilledOnNode(sb, sandbox.KillNodeLost))
	}
}

// handOver gives dead node n's parked sandbox sb to the live node with
// the most free memory among those on the same shared storage, which
// takes it over from there (park.Room.TakeOverParked) and resumes
// it when asked. The move is conditional: with several API processes,
// or a node that came back and resumed it, it happens at most once.
func (a *API) handOver(ctx context.Context, n *store.Node, sb *store.Sandbox) {
	nodes, err := a.place.candidates(ctx, need{template: sb.TemplateID, memoryMB: int64(sb.MemoryMB)})
	if err != nil {
		log.G(ctx).Warn("reaper: listing live nodes for a parked sandbox", "sandbox", sb.ID, "err", err)
		return
	}
	for _, to := range nodes {
		if to.Name == n.Name || to.ShareID != n.ShareID {
			continue
		}
		err := a.opts.Store.MoveSandbox(ctx, sb.ID, n.Name, to.Name)
		if err == nil {
			a.nodes.forget(sb.ID)
			log.G(ctx).Warn("parked sandbox of a dead node handed to another", "sandbox", sb.ID, "from", n.Name, "to", to.Name)
		} else if !errdefs.IsNotFound(err) && !errdefs.IsConflict(err) {
			log.G(ctx).Warn("reaper: handing over a parked sandbox", "sandbox", sb.ID, "err", err)
		}
		return
	}
}

// killOnDeadNode answers DELETE /sandboxes/{id} for a sandbox whose node
// is not alive (a paused one, which the reaper keeps for its node's
// return): the record goes, with a killed event, and the node destroys
// what is left of it when it comes back. A machine that is gone for good
// would otherwise leave its paused sandboxes listed for ever.
func (a *API) killOnDeadNode(w http.ResponseWriter, r *http.Request, id string) {
	ctx := r.Context()
	sb, err := a.opts.Store.GetSandbox(ctx, id)
	if err == nil {
		err = a.opts.Store.DeleteSandbox(ctx, id)
	}
	if errdefs.IsNotFound(err) {
		httperr.Error(w, http.StatusNotFound, fmt.Sprintf("sandbox %q not found", id))
		return
	}
	if err != nil {
		log.G(ctx).Error("forgetting a sandbox of a dead node", "sandbox", id, "err", err)
		httperr.Error(w, http.StatusInternalServerError, "forgetting the sandbox failed")
		return
	}
	a.nodes.forget(id)
	log.G(ctx).Info("sandbox of a dead node killed by request", "sandbox", id, "node", sb.Node)
	a.record(ctx, events.KilledOnNode(sb, sandbox.KillRequested))
	w.WriteHeader(http.StatusNoContent)
}

// record records e, if events are recorded.
func (a *API) record(ctx context.Context, e *store.Event) {
	if a.opts.Events != nil {
		a.opts.Events.Record(ctx, e)
	}
}
