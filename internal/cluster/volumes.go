package cluster

import (
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// Volume relays a /volumes or /volumecontent route to a node: any alive
// one serves every volume, as they all mount the shared storage the
// volumes live on. The node that answered the last one is asked first; a
// node that answers 501 (started without volume storage) or cannot be
// reached is passed over for the next, while the request's body is still
// unsent (it goes with Expect: 100-continue, so a refusal comes first).
func (a *API) Volume(w http.ResponseWriter, r *http.Request) error {
	alive, err := a.nodes.alive(r.Context())
	if err != nil {
		return errdefs.New(errdefs.ErrUnavailable, err.Error())
	}
	if len(alive) == 0 {
		return errdefs.New(errdefs.ErrUnavailable, "no node is alive to serve volumes")
	}
	nodes := a.volumeOrder(alive)
	for i, node := range nodes {
		d, err := destOf(node)
		if err != nil {
			log.G(r.Context()).Warn("volume route: skipping a node", "node", node.Name, "err", err)
			continue
		}
		body := &heldBody{rc: r.Body}
		d.bearer = strings.HasPrefix(r.URL.Path, "/volumecontent/")
		d.quiet = i < len(nodes)-1
		d.retryOn = func(status int) bool { return status == http.StatusNotImplemented }
		d.seal = body.seal
		out := r.Clone(r.Context())
		rec := &volumeAnswer{StatusWriter: apiserver.StatusWriter{ResponseWriter: w}}
		if r.Body != nil && r.Body != http.NoBody {
			out.Body = body
			if d.quiet && !expectsContinue(r) {
				out.Header.Set("Expect", "100-continue")
				rec.dropContinue = true
			}
		}
		a.fwd.forward(rec, out, d)
		if d.failed == nil || !d.quiet {
			if d.failed == nil {
				a.answeredVolume(node.Name, rec.Status())
			}
			return nil
		}
		log.G(r.Context()).Info("volume route refused by a node, trying the next", "node", node.Name, "err", d.failed)
	}
	return errdefs.New(errdefs.ErrUnavailable, "no node could be reached to serve volumes")
}

// answeredVolume notes that node answered a volume route with status:
// the next goes to it first, unless it has no volumes (501).
func (a *API) answeredVolume(node string, status int) {
	if status == http.StatusNotImplemented {
		node = ""
	}
	a.lastVolumeNode.Store(node)
}

// volumeOrder is alive with the node that last answered a volume route
// first.
func (a *API) volumeOrder(alive []*store.Node) []*store.Node {
	last, _ := a.lastVolumeNode.Load().(string)
	out := make([]*store.Node, 0, len(alive))
	for _, n := range alive {
		if n.Name == last {
			out = append(out, n)
		}
	}
	for _, n := range alive {
		if n.Name != last {
			out = append(out, n)
		}
	}
	return out
}

func expectsContinue(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Expect"), "100-continue")
}

// volumeAnswer is the client's side of a relayed volume route: it notes
// the node's final status and, with dropContinue, keeps the node's 100
// Continue, an answer to the Expect the API role added, from a client
// that did not ask for it.
type volumeAnswer struct {
	apiserver.StatusWriter
	dropContinue bool
}

func (w *volumeAnswer) WriteHeader(code int) {
	if code == http.StatusContinue && w.dropContinue {
		return
	}
	w.StatusWriter.WriteHeader(code)
}

// heldBody is the client's request body lent to one attempt: once sealed
// (the attempt given up before it read a byte) it reads as empty and
// leaves the client's body whole for the next attempt. Closing it leaves
// the client's body to its server.
type heldBody struct {
	rc     io.ReadCloser
	mu     sync.Mutex
	read   bool
	sealed bool
}

func (b *heldBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sealed {
		return 0, io.EOF
	}
	b.read = true
	return b.rc.Read(p)
}

func (b *heldBody) Close() error { return nil }

// seal ends the attempt's use of the body; false when it read some.
func (b *heldBody) seal() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.read {
		return false
	}
	b.sealed = true
	return true
}
