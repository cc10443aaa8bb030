package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
	"github.com/warren-sandbox/warren/pkg/warren"
)

// TestIdempotentCreate: creates with one Idempotency-Key make one sandbox,
// whether sent one after the other (the Go SDK's option), at once (every
// answer the same), or again after a server restart; the key with another
// body is a 422 in E2B's error shape; once its sandbox is killed, a 409.
func TestIdempotentCreate(t *testing.T) {
	cfg := loadConfig(t)
	o := serverOpts{index: 185, runtime: cfg.runtimes[0], dataDir: t.TempDir()}
	s := launchServer(t, cfg, o)
	ctx := t.Context()
	c := goClient(t, cfg, s)

	opts := warren.CreateOptions{Timeout: time.Minute, Metadata: map[string]string{"idem": "seq"}, IdempotencyKey: "seq-" + newAPIKey(t)[4:20]}
	first, err := c.Create(ctx, "base", opts)
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Create(ctx, "base", opts)
	if err != nil || again.ID != first.ID || again.EnvdAccessToken != first.EnvdAccessToken {
		t.Fatalf("second create with the key: %+v, %v; want sandbox %s", again, err, first.ID)
	}
	wantCount(t, c, "seq", 1)

	const body = `{"templateID":"base","timeout":60,"metadata":{"idem":"conc"}}`
	answers := concurrentCreates(t, s, "/v2/sandboxes", body, "conc-key", 6)
	for i, a := range answers[1:] {
		if a != answers[0] {
			t.Fatalf("concurrent answer %d differs:\n%s\nvs\n%s", i+1, a, answers[0])
		}
	}
	wantCount(t, c, "conc", 1)

	status, data := idemCreate(t, s, "/v2/sandboxes", `{"templateID":"base","timeout":61,"metadata":{"idem":"conc"}}`, "conc-key")
	wantE2BError(t, "another body", status, data, http.StatusUnprocessableEntity)
	wantCount(t, c, "conc", 1)

	s.stopLeavingSandboxes(t)
	o.apiKey = s.apiKey
	s2 := launchServer(t, cfg, o)
	if status, data := idemCreate(t, s2, "/v2/sandboxes", body, "conc-key"); status != http.StatusCreated || string(data) != answers[0] {
		t.Fatalf("retry after a restart: %d %s, want the first answer %s", status, data, answers[0])
	}
	c2 := goClient(t, cfg, s2)
	wantCount(t, c2, "conc", 1)

	if err := c2.Kill(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.Create(ctx, "base", opts); !errors.Is(err, warren.ErrConflict) {
		t.Fatalf("create with the key of a killed sandbox: %v, want a conflict (409)", err)
	}
	wantCount(t, c2, "seq", 0)
}

// TestIdempotentCreateAPIRole: through `warren serve --role=api` in front
// of two nodes, concurrent creates with one key, spread over both nodes,
// make one sandbox; the key lives in Postgres.
func TestIdempotentCreateAPIRole(t *testing.T) {
	cfg := loadConfig(t)
	url := pgtest.Start(t).NewDatabase(t)
	_, _, api := twoNodesAndAPI(t, cfg, url, 187, cfg.runtimes[0])
	const body = `{"templateID":"base","timeout":60,"metadata":{"idem":"cluster"}}`
	answers := concurrentCreates(t, api, "/sandboxes", body, "cluster-key", 4)
	for i, a := range answers[1:] {
		if a != answers[0] {
			t.Fatalf("answer %d through the API differs:\n%s\nvs\n%s", i+1, a, answers[0])
		}
	}
	wantCount(t, goClient(t, cfg, api), "cluster", 1)
}

// concurrentCreates sends n creates with key at once and returns their
// bodies, failing unless each is a 201.
func concurrentCreates(t *testing.T, s *server, path, body, key string, n int) []string {
	t.Helper()
	answers := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, data := idemCreate(t, s, path, body, key)
			if status != http.StatusCreated {
				t.Errorf("create %d: %d %s", i, status, data)
			}
			answers[i] = string(data)
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	return answers
}

func idemCreate(t *testing.T, s *server, path, body, key string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-KEY", s.apiKey)
	req.Header.Set("Idempotency-Key", key)
	res, err := harnessClient.Do(req)
	if err != nil {
		t.Errorf("create: %v", err)
		return 0, nil
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return res.StatusCode, data
}

func wantCount(t *testing.T, c *warren.Client, tag string, n int) {
	t.Helper()
	list, _, err := c.List(t.Context(), warren.ListOptions{Metadata: map[string]string{"idem": tag}})
	if err != nil || len(list) != n {
		t.Fatalf("sandboxes tagged %s: %d (%v), want %d", tag, len(list), err, n)
	}
}

// wantE2BError checks an error answer's status and E2B's body shape.
func wantE2BError(t *testing.T, what string, status int, data []byte, want int) {
	t.Helper()
	var e struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	if status != want || json.Unmarshal(data, &e) != nil || e.Code != want || e.Message == "" {
		t.Fatalf("%s: %d %s, want %d with {code, message}", what, status, data, want)
	}
	t.Logf("%s: %s", what, fmt.Sprint(e.Message))
}
