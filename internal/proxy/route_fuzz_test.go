package proxy

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
)

// FuzzSandboxOf routes requests with arbitrary Host and E2B headers, as
// anyone on the network can send them. A request routed to a sandbox must
// name a port in range and, when it came by Host, an id of [a-z0-9] only;
// the host the SDK would build from that id and port must route back to
// them.
func FuzzSandboxOf(f *testing.F) {
	const domain = "Sandbox.Example.test"
	for _, s := range [][3]string{
		{"49983-abc123.sandbox.example.test", "", ""},
		{"8080-abc123-client.sandbox.example.test:3000", "", ""},
		{"0-abc.sandbox.example.test", "", ""},
		{"65536-abc.sandbox.example.test", "", ""},
		{"+80-abc.sandbox.example.test", "", ""},
		{"80-ABC.SANDBOX.EXAMPLE.TEST", "", ""},
		{"80-a_b.sandbox.example.test", "", ""},
		{"[::1]:80", "", ""},
		{"api.example.test", "abc", "49983"},
		{"", "abc", "-1"},
		{"80-.sandbox.example.test", "", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, host, idHeader, portHeader string) {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = host
		if idHeader != "" {
			r.Header["E2b-Sandbox-Id"] = []string{idHeader}
		}
		r.Header["E2b-Sandbox-Port"] = []string{portHeader}
		id, port, ok, err := SandboxOf(r, domain)
		if err != nil {
			if ok || id != "" || port != 0 || r.Header.Get("E2b-Sandbox-Id") == "" {
				t.Fatalf("error %v with id %q port %d ok %v", err, id, port, ok)
			}
			return
		}
		if !ok {
			if id != "" || port != 0 {
				t.Fatalf("an API request got id %q port %d", id, port)
			}
			return
		}
		if port < 1 || port > 65535 {
			t.Fatalf("routed to port %d", port)
		}
		if r.Header.Get("E2b-Sandbox-Id") != "" {
			return // the header's id is looked up as it is; an unknown one is a 404 there
		}
		if !validID(id) {
			t.Fatalf("host %q routed to id %q", host, id)
		}
		back := strconv.Itoa(port) + "-" + id + "." + strings.ToLower(domain)
		if id2, port2, ok2 := parseHost(back, strings.ToLower(domain)); !ok2 || id2 != id || port2 != port {
			t.Fatalf("host %q routes to (%q, %d, %v), want (%q, %d)", back, id2, port2, ok2, id, port)
		}
	})
}
