package cluster

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestRelayKeepsConnectionsSound: a node that answers before reading the
// request's body (envd refusing a token, a refused dial) must not leave
// net/http reading the client's body behind the server's back: every
// request on one kept-alive connection gets its answer.
func TestRelayKeepsConnectionsSound(t *testing.T) {
	for _, tc := range []struct {
		name string
		down bool
	}{{"node answers early", false}, {"node refuses the dial", true}} {
		t.Run(tc.name, func(t *testing.T) {
			st := sqlitetest.Open(t)
			n := newFakeNode(t, st, "n")
			n.register(t, true, time.Unix(1, 0))
			n.answer = func(w http.ResponseWriter, r *http.Request) { httperr.Error(w, http.StatusForbidden, "no token") }
			if tc.down {
				n.srv.Close()
			}
			if err := st.CreateSandbox(context.Background(), &store.Sandbox{ID: "sb", Node: "n", State: store.SandboxRunning}); err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(newTestAPI(st, nil))
			t.Cleanup(srv.Close)
			client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 1}}
			body := bytes.Repeat([]byte("x"), 256<<10)
			for i := range 20 {
				req, _ := http.NewRequest("POST", srv.URL+"/filesystem.Filesystem/Upload", bytes.NewReader(body))
				req.Header.Set("E2b-Sandbox-Id", "sb")
				req.Header.Set("E2b-Sandbox-Port", "49983")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatalf("request %d on the kept-alive connection: %v", i, err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusBadGateway {
					t.Fatalf("request %d: %s", i, resp.Status)
				}
			}
		})
	}
}
