package image

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/netguard"
)

// TestPullRefusesInternalAddresses: with the guard on, a pull from the
// host's loopback is refused before any connection, with the same error
// for an open port (a listening server that sees no request) and a closed
// one.
func TestPullRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedHost := closed.Addr().String()
	closed.Close()
	e := newEnv(t)
	e.p.Dial = (&netguard.Guard{}).DialContext
	openHost := strings.TrimPrefix(srv.URL, "http://")
	var msgs []string
	for _, host := range []string{openHost, closedHost} {
		_, err := e.p.Resolve(t.Context(), testTeam, host+"/team/secret:1", nil, nil)
		if !errors.Is(err, errdefs.ErrPermissionDenied) || !strings.Contains(err.Error(), "internal address") {
			t.Fatalf("pull from %s: %v, want a refusal", host, err)
		}
		msgs = append(msgs, strings.ReplaceAll(err.Error(), host, "HOST"))
	}
	if msgs[0] != msgs[1] {
		t.Errorf("an open and a closed port answer differently:\n%s\n%s", msgs[0], msgs[1])
	}
	if hits != 0 {
		t.Errorf("the loopback server saw %d requests", hits)
	}
}
