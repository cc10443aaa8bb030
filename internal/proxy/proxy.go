// Package proxy routes sandbox traffic that arrives on warren's one listener.
// A request belongs to a sandbox when it carries E2b-Sandbox-Id and
// E2b-Sandbox-Port (SDKs configured with E2B_SANDBOX_URL), when its Host is
// `<port>-<id>.<domain>` (getHost, E2B_DOMAIN with wildcard DNS), or when it
// is a signed /files URL with neither; everything else goes to the REST API.
// A private sandbox's ports take its traffic token as E2B's header or, for
// browsers, as a host-only cookie set from a one-time query parameter
// (traffic.go).
package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
)

// Target is what the proxy needs to reach a sandbox; its Resolver (the
// sandbox manager) fills it in.
type Target struct {
	ID                 string
	IP                 netip.Addr
	EnvdAccessToken    string
	TrafficAccessToken string
	// MaskRequestHost replaces the Host header towards the sandbox.
	MaskRequestHost string
	// HTTPSPorts are the ports whose services speak TLS (network.httpsPorts).
	HTTPSPorts []int
	// Track registers a connection to the sandbox so Kill and Pause can cut
	// it; the returned func unregisters it.
	Track func(net.Conn) func()
}

// Resolver finds a live sandbox. lifecycle.Manager implements it.
type Resolver interface {
	Resolve(ctx context.Context, id string) (*Target, error)
	LiveTokens() map[string]string
}

// Handler is the top-level HTTP handler: sandbox traffic to the sandbox,
// the rest to API.
type Handler struct {
	resolver Resolver
	api      http.Handler
	domain   string
	rp       *httputil.ReverseProxy
}

type targetKey struct{}

type routed struct {
	target *Target
	port   int
}

// New returns a Handler. domain is the sandbox domain for Host routing.
func New(resolver Resolver, api http.Handler, domain string) *Handler {
	h := &Handler{resolver: resolver, api: api, domain: strings.ToLower(domain)}
	transport := &http.Transport{
		DialContext:           h.dial,
		MaxIdleConnsPerHost:   32,
		IdleConnTimeout:       90 * time.Second,
		ResponseHeaderTimeout: 0, // envd streams may wait long for their first byte
		DisableCompression:    true,
		// network.httpsPorts: services that serve TLS themselves, most
		// with self-signed certificates; E2B's proxy does not verify them
		// either. The client's own connection is TLS to warren already
		// when it asked for it.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // see above
	}
	h.rp = &httputil.ReverseProxy{
		Rewrite:       rewrite,
		Transport:     transport,
		FlushInterval: -1, // Connect streams and NDJSON must not be buffered
		ErrorHandler:  h.proxyError,
	}
	return h
}

// dialTimeout bounds a connection to a sandbox's port that nothing
// answers. A closed port is refused at once; only a sandbox whose network
// stack gets too little CPU to answer takes long (under gVisor the stack
// runs in the sandbox's own Sentry, which sandboxes spinning every CPU of
// the host starve): such a sandbox is slow, not gone, and its requests
// wait rather than fail.
const dialTimeout = 30 * time.Second

// dial connects to the sandbox and registers the connection so that killing
// or pausing the sandbox cuts it, which aborts streams in flight as the SDK
// expects instead of leaving them hanging.
func (h *Handler) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{Timeout: dialTimeout}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	if r, ok := ctx.Value(targetKey{}).(*routed); ok && r.target.Track != nil {
		return &trackedConn{Conn: c, untrack: r.target.Track(c)}, nil
	}
	return c, nil
}

type trackedConn struct {
	net.Conn
	untrack func()
}

func (c *trackedConn) Close() error {
	c.untrack()
	return c.Conn.Close()
}

func rewrite(pr *httputil.ProxyRequest) {
	r := pr.In.Context().Value(targetKey{}).(*routed)
	pr.Out.URL.Scheme = "http"
	if slices.Contains(r.target.HTTPSPorts, r.port) {
		pr.Out.URL.Scheme = "https"
	}
	pr.Out.URL.Host = netip.AddrPortFrom(r.target.IP, uint16(r.port)).String()
	pr.Out.Host = pr.In.Host
	if m := r.target.MaskRequestHost; m != "" {
		// The sandbox's service sees the host the user chose, not
		// warren's routing name (network.maskRequestHost).
		pr.Out.Host = strings.ReplaceAll(m, "${PORT}", strconv.Itoa(r.port))
	}
	pr.Out.Header.Del("E2b-Sandbox-Id")
	pr.Out.Header.Del("E2b-Sandbox-Port")
	// The token is warren's to check, never the sandbox's to see.
	pr.Out.Header.Del(trafficHeader)
	stripCookie(pr.Out.Header)
	pr.Out.URL.RawQuery = stripQuery(pr.Out.URL.RawQuery)
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id, port, ok, err := h.route(r)
	if err != nil {
		httperr.Error(w, http.StatusBadRequest, err.Error())
		return
	}
	if !ok {
		if r.URL.Path == "/files" && r.URL.Query().Get("signature") != "" {
			h.serveSignedFile(w, r)
			return
		}
		h.api.ServeHTTP(w, r)
		return
	}
	h.forward(w, r, id, port)
}

func (h *Handler) forward(w http.ResponseWriter, r *http.Request, id string, port int) {
	if port == wire.EnvdPort && r.URL.Path == "/init" {
		// envd exempts /init from its token so warren can hand it one;
		// a client that could reach it could replace the token.
		httperr.Error(w, http.StatusForbidden, "envd /init is reserved for warren")
		return
	}
	t, err := h.resolver.Resolve(r.Context(), id)
	if err != nil {
		if !errdefs.IsNotFound(err) && !errors.Is(err, errdefs.ErrUnavailable) {
			log.G(r.Context()).Error("resolving sandbox", "sandbox", id, "err", err)
		}
		httperr.Write(w, httperr.Body{
			Code: http.StatusBadGateway, ErrorCode: httperr.SandboxNotFound, SandboxID: id, Message: "The sandbox was not found",
		})
		return
	}
	// envd's port is exempt from the traffic access token: envd checks its own.
	if port != wire.EnvdPort && t.TrafficAccessToken != "" && !checkTraffic(w, r, id, t.TrafficAccessToken) {
		return
	}
	// HTTP/1 servers stop request-body reads once the response starts
	// unless told otherwise; a proxied stream may still be sending its body
	// (or its final chunk) when the sandbox answers.
	out, finish := GuardBody(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, &routed{target: t, port: port})))
	defer finish()
	h.rp.ServeHTTP(w, out)
}

func (h *Handler) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	rt := r.Context().Value(targetKey{}).(*routed)
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		log.G(r.Context()).Debug("dialing a sandbox port", "sandbox", rt.target.ID, "port", rt.port, "err", err)
		httperr.Write(w, httperr.Body{
			Code: http.StatusBadGateway, ErrorCode: httperr.PortNotOpen, SandboxID: rt.target.ID, Port: rt.port,
			Message: "The sandbox is running but port is not open",
		})
		return
	}
	if r.Context().Err() != nil {
		return // the client went away
	}
	// The connection broke before a response: the sandbox was killed or
	// paused meanwhile, or the service on the port reset it.
	log.G(r.Context()).Debug("proxying to a sandbox port", "sandbox", rt.target.ID, "port", rt.port, "err", err)
	httperr.Write(w, httperr.Body{
		Code: http.StatusBadGateway, ErrorCode: httperr.BadGateway, SandboxID: rt.target.ID, Port: rt.port,
		Message: fmt.Sprintf("The connection to port %d of the sandbox failed: %v", rt.port, err),
	})
}

// route finds the sandbox a request is for. ok is false for API requests.
func (h *Handler) route(r *http.Request) (id string, port int, ok bool, err error) {
	return SandboxOf(r, h.domain)
}

// SandboxOf finds the sandbox and port a request is for, by its
// E2b-Sandbox-Id and E2b-Sandbox-Port headers or by a Host of
// `<port>-<id>.<domain>`; ok is false for an API request. The cluster's
// API role routes with it too, so both read a request the same way.
func SandboxOf(r *http.Request, domain string) (id string, port int, ok bool, err error) {
	if id := r.Header.Get("E2b-Sandbox-Id"); id != "" {
		p, perr := strconv.Atoi(r.Header.Get("E2b-Sandbox-Port"))
		if perr != nil || p <= 0 || p > 65535 {
			return "", 0, false, errors.New("missing header: E2b-Sandbox-Port must be a port number")
		}
		return id, p, true, nil
	}
	id, port, ok = parseHost(r.Host, strings.ToLower(domain))
	return id, port, ok, nil
}

// parseHost splits `<port>-<id>.<domain>[:listenport]`.
func parseHost(host, domain string) (string, int, bool) {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	label, rest, found := strings.Cut(host, ".")
	if !found || domain == "" || rest != domain {
		return "", 0, false
	}
	p, id, found := strings.Cut(label, "-")
	if !found || id == "" {
		return "", 0, false
	}
	id, _, _ = strings.Cut(id, "-")
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 || !validID(id) {
		return "", 0, false
	}
	return id, port, true
}

func validID(id string) bool {
	for _, c := range id {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return id != ""
}
