package warren

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/api/wire"
)

// Ports inside a sandbox that the SDK talks to (api/wire's, which envd and
// the proxy use too).
const (
	EnvdPort        = wire.EnvdPort        // envd: processes, files
	InterpreterPort = wire.InterpreterPort // the code interpreter's server
)

// baseURL is where a request for the sandbox's port goes: the sandbox URL
// verbatim when one is set (the sandbox is then named in headers), else
// the port's own host under the sandbox's domain, as E2B's SDKs do.
func (s *Sandbox) baseURL(port int) string {
	if u := s.client.cfg.SandboxURL; u != "" {
		return strings.TrimRight(u, "/")
	}
	return "https://" + s.Host(port)
}

// httpClient returns a client whose requests carry the headers that route
// them to the sandbox's port and sign them in to envd.
func (s *Sandbox) httpClient(port int) *http.Client {
	base := s.client.cfg.HTTPClient
	c := *base
	next := base.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &sandboxTransport{next: next, id: s.ID, port: strconv.Itoa(port),
		token: s.EnvdAccessToken, traffic: s.TrafficAccessToken, envd: port == EnvdPort}
	return &c
}

// sandboxTransport adds the routing and access headers to each request.
type sandboxTransport struct {
	next           http.RoundTripper
	id, port       string
	token, traffic string
	envd           bool
}

func (t *sandboxTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	h := req.Header
	h.Set("E2b-Sandbox-Id", t.id)
	h.Set("E2b-Sandbox-Port", t.port)
	if t.token != "" {
		h.Set("X-Access-Token", t.token)
	}
	if !t.envd && t.traffic != "" {
		h.Set("E2B-Traffic-Access-Token", t.traffic)
	}
	return t.next.RoundTrip(req)
}
