package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"

	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// maxCreateBody bounds a create's body, which is kept to be sent again to
// the next node when one refuses; the nodes check the rest.
const maxCreateBody = 1 << 20

// defaultMemoryMB is what a create is assumed to need when neither the
// request nor its template says.
const defaultMemoryMB = 512

// errTryNext: the node could not take the create (unreachable, full,
// starting, or without the template's files); the next one may.
var errTryNext = errors.New("the node could not take this create")

// Create places POST /sandboxes and /v2/sandboxes: the candidates in
// order until one answers with anything but "no room here".
func (a *API) Create(w http.ResponseWriter, r *http.Request) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCreateBody+1))
	if err != nil {
		return errdefs.New(errdefs.ErrInvalidArgument, "reading request body: "+err.Error())
	}
	if len(body) > maxCreateBody { // 413, as a node answers it
		return errdefs.New(errdefs.ErrTooLarge, fmt.Sprintf("request body is larger than %d bytes, the most this endpoint takes", maxCreateBody))
	}
	n, nodes, err := a.createTargets(r.Context(), body)
	if err != nil {
		return err
	}
	for i, node := range nodes {
		last := i == len(nodes)-1
		d := a.tryCreate(w, r, node, n, body, !last)
		if d.failed == nil || !d.quiet {
			return nil // answered, one way or the other
		}
		log.G(r.Context()).Info("create refused by a node, trying the next", "node", node.Name, "err", d.failed)
	}
	return nil
}

// tryCreate sends the create to node under a reservation, ended however
// the relaying ends (a node dying mid-answer aborts the handler).
func (a *API) tryCreate(w http.ResponseWriter, r *http.Request, node *store.Node, n need, body []byte, quiet bool) *dest {
	done := a.place.reserve(node.Name, n.memoryMB)
	rec := &apiserver.StatusWriter{ResponseWriter: w}
	made := false
	defer func() { done(made) }()
	d, ok := a.sendCreate(rec, r, node, body, quiet)
	// A retry's replayed answer made no sandbox on the node.
	made = ok && rec.Status() == http.StatusCreated && w.Header().Get(apiserver.ReplayedHeader) == ""
	return d
}

// sendCreate forwards the create to node; with quiet, a refusal that
// another node might not make is not answered but reported in d.failed.
func (a *API) sendCreate(w http.ResponseWriter, r *http.Request, node *store.Node, body []byte, quiet bool) (*dest, bool) {
	d, err := destOf(node)
	if err != nil {
		httperr.Error(w, http.StatusBadGateway, err.Error())
		return &dest{node: node.Name}, false
	}
	d.quiet = quiet
	out := r.Clone(r.Context())
	out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	a.fwd.forward(w, out, d)
	return d, d.failed == nil
}

// createTargets reads what the create needs and returns the nodes to try.
func (a *API) createTargets(ctx context.Context, body []byte) (need, []*store.Node, error) {
	var req struct {
		TemplateID string `json:"templateID"`
		MemoryMB   *int64 `json:"memoryMB"`
	}
	_ = json.Unmarshal(body, &req) // a malformed body is the node's to refuse
	n := need{template: req.TemplateID, memoryMB: defaultMemoryMB}
	if snap, err := a.opts.Store.GetSnapshot(ctx, req.TemplateID); err == nil {
		n.template, n.memoryMB = snap.ID, int64(snap.MemoryMB)
		nodes, err := a.snapshotNodes(ctx, snap)
		return n, nodes, err
	}
	if tpl, err := a.opts.Store.GetTemplate(ctx, req.TemplateID); err == nil {
		n.template = tpl.ID
		if tpl.MemoryMB > 0 {
			n.memoryMB = int64(tpl.MemoryMB)
		}
	}
	if req.MemoryMB != nil && *req.MemoryMB > 0 {
		n.memoryMB = *req.MemoryMB
	}
	nodes, err := a.place.candidates(ctx, n)
	if err != nil {
		return n, nil, err
	}
	if len(nodes) == 0 {
		// E2B names a placement without a candidate node a lack of capacity.
		return n, nil, httperr.WithCode(errdefs.New(errdefs.ErrUnavailable, "no node is alive to run sandboxes: start warren serve --role=node"), httperr.CapacityUnavailable)
	}
	return n, nodes, nil
}

// snapshotNodes returns the alive node that holds snap's files: the one
// whose heartbeat lists it or, until one does, the node of the sandbox it
// was taken from.
func (a *API) snapshotNodes(ctx context.Context, snap *store.Snapshot) ([]*store.Node, error) {
	source := ""
	if sb, err := a.opts.Store.GetSandbox(ctx, snap.SandboxID); err == nil {
		source = sb.Node
	}
	nodes, err := a.place.candidates(ctx, need{template: snap.ID, memoryMB: int64(snap.MemoryMB)})
	if err != nil {
		return nil, err
	}
	nodes = slices.DeleteFunc(nodes, func(x *store.Node) bool { return x.Name != source && !slices.Contains(x.Templates, snap.ID) })
	if len(nodes) == 0 {
		return nil, httperr.WithCode(errdefs.New(errdefs.ErrUnavailable, fmt.Sprintf("snapshot %q is kept on a node that is not alive now", snap.ID)), httperr.NoCompatibleNode)
	}
	return nodes, nil
}

// retryable says whether a node's answer to a create means "not here"
// rather than "not at all": full (503), out of disk (507), without what
// the create needs (501: a create with volumeMounts on a node started
// without volume storage). A quota (429) or a bad request is the same on
// every node.
func retryable(status int) bool {
	return status == http.StatusServiceUnavailable || status == http.StatusInsufficientStorage ||
		status == http.StatusNotImplemented
}
