package interpreter

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
)

// globalEnv is the sandbox's global environment (the envVars given at
// sandbox creation), fetched once from envd with the first caller's access
// token and then set in every kernel before its first execution.
type globalEnv struct {
	url    string // envd's /envs; empty skips loading (E2B_LOCAL)
	client *http.Client

	mu     sync.Mutex // mu protects loaded and vars
	loaded bool
	vars   map[string]string
}

func newGlobalEnv(url string) *globalEnv {
	return &globalEnv{url: url, client: &http.Client{Timeout: 5 * time.Second}}
}

// load fetches the env once. A failure is logged and not retried: the
// reference server treats the env as best effort too, and retrying on every
// execution would add envd's timeout to each call.
func (g *globalEnv) load(ctx context.Context, token string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.loaded {
		return
	}
	g.loaded = true
	if g.url == "" {
		return
	}
	vars, err := g.fetch(ctx, token)
	if err != nil {
		log.G(ctx).Warn("loading the sandbox env from envd", "err", err)
		return
	}
	g.vars = vars
}

func (g *globalEnv) fetch(ctx context.Context, token string) (map[string]string, error) {
	req, err := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodGet, g.url, nil)
	if err != nil {
		return nil, fmt.Errorf("building envd request: %w", err)
	}
	if token != "" {
		req.Header.Set("X-Access-Token", token)
	}
	resp, err := g.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("calling envd: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("envd /envs returned %s", resp.Status)
	}
	var vars map[string]string
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&vars); err != nil {
		return nil, fmt.Errorf("decoding envd /envs: %w", err)
	}
	return vars, nil
}

func (g *globalEnv) get() map[string]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return maps.Clone(g.vars)
}
