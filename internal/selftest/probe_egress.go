package selftest

import (
	"context"
	"fmt"
	"strings"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// fetchPy requests http://<ip>/ with a Host header and prints the status
// and body, or "unreachable".
func fetchPy(ip, host string) string {
	return fmt.Sprintf(`python3 -c '
import http.client
try:
    c = http.client.HTTPConnection("%s", 80, timeout=3)
    c.request("GET", "/", headers={"Host": "%s"})
    r = c.getresponse()
    print(r.status, r.read(200).decode(errors="replace"))
except OSError as e:
    print("unreachable", e)'`, ip, host)
}

// probeEgress checks egress policy against a server the probe starts in a
// netns of its own behind the host (never a real internet address). A
// sandbox with default networking reaches it (the control); one whose
// denyOut covers its address does not; and one without internet access
// whose allowOut names only allowed.invalid gets a 403 from warren's egress
// proxy when it dials the server's address with Host denied.invalid. A
// second server on a link-local address (like cloud metadata services)
// stays out of reach even when allowOut names it. The servers count what
// reaches them.
func probeEgress(ctx context.Context, e *Env) error {
	o, err := startOutside()
	if err != nil {
		return fmt.Errorf("starting the outside server: %w", err)
	}
	defer o.Close()
	ll, err := linkLocalOutside()
	if err != nil {
		return fmt.Errorf("starting the link-local server: %w", err)
	}
	if ll != nil {
		defer ll.Close()
	}
	for i, c := range egressCases(o, ll) {
		target := c.server.IP.String()
		before := c.server.hits.Load()
		s, err := e.C.Create(ctx, e.Template, c.network)
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		out, err := must(ctx, s, "user", fetchPy(target, c.host))
		s.Kill(context.WithoutCancel(ctx))
		if err != nil {
			return fmt.Errorf("%s: %w", c.name, err)
		}
		if !c.want(out) {
			return fmt.Errorf("%s: the request to %s (Host %s) got %q", c.name, target, c.host, out)
		}
		if reached := c.server.hits.Load() - before; i > 0 && reached != 0 {
			return fmt.Errorf("%s: %d requests reached the server", c.name, reached)
		}
	}
	return nil
}

// egressCase is one sandbox of the egress probe and what its request to
// server must get.
type egressCase struct {
	name    string
	network *warren.CreateOptions
	host    string
	want    func(out string) bool
	server  *outside
}

// egressCases lists the probe's sandboxes; the first is the control, whose
// request must reach o. ll may be nil.
func egressCases(o, ll *outside) []egressCase {
	ip := o.IP.String()
	cases := []egressCase{
		{"control (default network)", nil, "control.invalid",
			func(out string) bool { return strings.HasPrefix(out, "200 outside control.invalid") }, o},
		{"denyOut of the server's address", &warren.CreateOptions{Network: &warren.Network{DenyOut: []string{ip + "/32"}}}, "x.invalid",
			func(out string) bool { return strings.HasPrefix(out, "unreachable") }, o},
		{"allowOut of another domain only", &warren.CreateOptions{NoInternet: true,
			Network: &warren.Network{AllowOut: []string{"allowed.invalid"}}}, "denied.invalid",
			func(out string) bool { return strings.HasPrefix(out, "403") }, o},
	}
	if ll != nil {
		cases = append(cases, egressCase{"allowOut of a link-local address",
			&warren.CreateOptions{Network: &warren.Network{AllowOut: []string{ll.IP.String() + "/32"}}}, "ll.invalid",
			func(out string) bool { return strings.HasPrefix(out, "unreachable") }, ll})
	}
	return cases
}
