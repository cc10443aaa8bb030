package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/clusterauth"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/proxy"
)

// forwarder relays requests to nodes as they came: method, path, query,
// headers and Host, which the node's own router reads for
// `<port>-<id>.<domain>`. Streams flow both ways unbuffered. The one
// exception is the client's API key: a node's address comes from the
// store, and no key may go to whatever a row there names. A REST route
// reaches the node with the key's hash (which the store keeps, and which
// opens nothing by itself) signed with the cluster secret; the node
// authorizes the key it names as if the key came. envd traffic loses
// X-API-KEY, which envd never reads.
type forwarder struct {
	auth *clusterauth.Signer
	rp   *httputil.ReverseProxy
	// client makes the API's own requests to nodes (fan-outs).
	client *http.Client

	// inflight cancels, by node, the requests being relayed to it: a node
	// found dead may be cut off rather than down, and what waits on it
	// would wait for ever (a stopped process's kernel still accepts).
	mu       sync.Mutex
	inflight map[string]map[*context.CancelCauseFunc]struct{}
}

type nodeKey struct{}

// errNodeLost ends the requests relayed to a node found dead.
var errNodeLost = errors.New("the node stopped heartbeating")

// dest is where one request goes.
type dest struct {
	node string
	base *url.URL
	// failed is set when the node could not be reached, so a create can
	// try the next node.
	failed error
	// quiet: the caller answers a failure itself (a create with nodes
	// left to try).
	quiet bool
	// traffic: sandbox traffic (not a REST route), to envd when envd;
	// the sandbox's own tokens authorize it, as on one machine.
	traffic, envd bool
	// bearer: the Authorization bearer is not an API key but a volume's
	// token, which the node checks: it goes on as it came.
	bearer bool
	// retryOn says which answers of a quiet request mean "not on this
	// node", so the next is tried; nil: retryable (a create's).
	retryOn func(status int) bool
	// seal, when set, is asked before a quiet request is given up for the
	// next node: false when its body was already read, so it cannot be
	// sent again and the answer stands.
	seal func() bool
}

// tryNext says whether a quiet request answered status goes on to the
// next node.
func (d *dest) tryNext(status int) bool {
	retry := retryable
	if d.retryOn != nil {
		retry = d.retryOn
	}
	return d.quiet && retry(status) && d.sealed()
}

func (d *dest) sealed() bool { return d.seal == nil || d.seal() }

func newForwarder(auth *clusterauth.Signer) *forwarder {
	f := &forwarder{auth: auth, inflight: map[string]map[*context.CancelCauseFunc]struct{}{}}
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		// A request sent with Expect: 100-continue keeps its body until
		// the node wants it, so a node's refusal leaves it to send to the
		// next (Volume).
		ExpectContinueTimeout: time.Second,
		// No response-header timeout: envd's streams may wait long for
		// their first byte, as through the node's own proxy.
	}
	f.client = &http.Client{Transport: transport, Timeout: 30 * time.Second}
	f.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			d := pr.In.Context().Value(nodeKey{}).(*dest)
			pr.SetURL(d.base)
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
			// Behind a TLS ingress the client's scheme and host are the
			// ingress's to tell (upload links are built from them).
			for _, h := range []string{"X-Forwarded-Proto", "X-Forwarded-Host"} {
				if v := pr.In.Header.Get(h); v != "" {
					pr.Out.Header.Set(h, v)
				}
			}
			f.authorize(pr.Out, pr.In, d)
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorHandler:  f.failed,
		// A stream cut by a kill or a client that left is routine.
		ErrorLog: slog.NewLogLogger(slog.Default().Handler(), slog.LevelDebug),
		ModifyResponse: func(resp *http.Response) error {
			d := resp.Request.Context().Value(nodeKey{}).(*dest)
			if d.tryNext(resp.StatusCode) {
				return fmt.Errorf("%w: it answered %s", errTryNext, resp.Status)
			}
			return nil
		},
	}
	return f
}

// authorize takes the client's API key off out, a request to a node, and
// for a REST route signs out with its hash instead (see forwarder).
func (f *forwarder) authorize(out, in *http.Request, d *dest) {
	out.Header.Del(clusterauth.Header) // the API's to set, never a client's
	if d.traffic {
		if d.envd {
			out.Header.Del("X-API-KEY")
		}
		return
	}
	if d.bearer {
		out.Header.Del("X-API-KEY")
		return
	}
	hash := ""
	if key := apikey.FromRequest(in); key != "" {
		hash = apikey.Hash(key)
	}
	out.Header.Del("X-API-KEY")
	if strings.HasPrefix(out.Header.Get("Authorization"), "Bearer ") {
		out.Header.Del("Authorization")
	}
	f.auth.Sign(out, hash)
}

// forward relays r to the node at base.
func (f *forwarder) forward(w http.ResponseWriter, r *http.Request, d *dest) {
	// As the node's proxy does: keep reading a streamed request body after
	// the response has begun, and keep net/http off it once done.
	ctx, cancel := context.WithCancelCause(context.WithValue(r.Context(), nodeKey{}, d))
	out, finish := proxy.GuardBody(w, r.WithContext(ctx))
	defer finish()
	defer f.track(d.node, &cancel)()
	f.rp.ServeHTTP(w, out)
}

// track registers a relayed request's cancel under node until the
// returned func runs.
func (f *forwarder) track(node string, cancel *context.CancelCauseFunc) func() {
	f.mu.Lock()
	if f.inflight[node] == nil {
		f.inflight[node] = map[*context.CancelCauseFunc]struct{}{}
	}
	f.inflight[node][cancel] = struct{}{}
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		delete(f.inflight[node], cancel)
		if len(f.inflight[node]) == 0 {
			delete(f.inflight, node)
		}
		f.mu.Unlock()
		(*cancel)(nil)
	}
}

// cut ends every request being relayed to node; it returns how many.
func (f *forwarder) cut(node string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for cancel := range f.inflight[node] {
		(*cancel)(errNodeLost)
	}
	return len(f.inflight[node])
}

func (f *forwarder) failed(w http.ResponseWriter, r *http.Request, err error) {
	d := r.Context().Value(nodeKey{}).(*dest)
	if r.Context().Err() != nil {
		if errors.Is(context.Cause(r.Context()), errNodeLost) {
			httperr.Error(w, http.StatusBadGateway, fmt.Sprintf("node %s stopped answering: its sandboxes are reported lost", d.node))
		}
		return // the client went away, or the node was cut off
	}
	d.failed = err
	var op *net.OpError
	if d.quiet && (errors.Is(err, errTryNext) || errors.As(err, &op) && op.Op == "dial" && d.sealed()) {
		return
	}
	d.quiet = false // answered here: a create must not go on to another node
	log.G(r.Context()).Warn("forwarding to node", "node", d.node, "path", r.URL.Path, "err", err)
	httperr.Error(w, http.StatusBadGateway, fmt.Sprintf("node %s did not answer: %v", d.node, err))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
