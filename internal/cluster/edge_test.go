package cluster

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apiserver"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestOneRouteTable: the one-machine server, a node and the API role
// serve the same route table, and answer what it lacks (no route, a
// method the path is not served with) alike.
func TestOneRouteTable(t *testing.T) {
	st := sqlitetest.Open(t)
	n := newFakeNode(t, st, "n")
	n.register(t, true, time.Unix(1, 0))
	node := apiserver.New(apiserver.Options{Store: st, Cluster: testSigner, NodeName: "n"})
	api := newTestAPI(st, nil)
	roles := []struct {
		name   string
		routes []string
		h      http.Handler
	}{
		{"one machine, starting", apiserver.Starting().(*apiserver.Server).Routes(), nil},
		{"one machine or node", node.Routes(), node},
		{"API role", api.Routes(), api},
	}
	want := roles[0].routes
	if len(want) < 30 {
		t.Fatalf("only %d routes: has registration moved?", len(want))
	}
	key := keyHeader(t, st)
	for _, role := range roles {
		if !slices.Equal(role.routes, want) {
			t.Errorf("%s serves %v,\nwant the one table %v", role.name, role.routes, want)
		}
	}
	for _, req := range [][2]string{{"GET", "/nope"}, {"GET", "/sandboxes/sb/pause"}, {"PATCH", "/sandboxes"}, {"POST", "/sandboxes/sb/nope"}} {
		var answers []string
		for _, role := range roles[1:] {
			r := httptest.NewRequest(req[0], req[1], nil)
			r.Header.Set("X-API-KEY", key["X-API-KEY"])
			w := httptest.NewRecorder()
			role.h.ServeHTTP(w, r)
			answers = append(answers, w.Result().Status+" Allow: "+w.Header().Get("Allow")+" "+w.Body.String())
		}
		if answers[0] != answers[1] || answers[0][0] != '4' {
			t.Errorf("%s %s: node answered %q, API role %q; want the same 4xx", req[0], req[1], answers[0], answers[1])
		}
	}
	if got := n.requests(); len(got) != 0 {
		t.Errorf("the node was asked %v: what the table lacks is answered by the API", got)
	}
}
