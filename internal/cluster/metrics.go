package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/httperr"
	"github.com/warren-sandbox/warren/internal/log"
)

// maxMetricsBody bounds one node's answer to a batch metrics request (at
// most 100 sandboxes, a few hundred bytes each).
const maxMetricsBody = 4 << 20

// BatchMetrics serves GET /sandboxes/metrics by asking every alive node
// (each answers for the sandboxes it runs, skipping others) and merging
// their answers. The key was checked before (the nodes check it too), so
// that a request without one costs no round of requests to every node.
func (a *API) BatchMetrics(w http.ResponseWriter, r *http.Request) error {
	alive, err := a.nodes.alive(r.Context())
	if err != nil {
		return errdefs.New(errdefs.ErrUnavailable, err.Error())
	}
	var (
		mu     sync.Mutex
		merged = map[string]json.RawMessage{}
		failed []error
		wg     sync.WaitGroup
	)
	for _, n := range alive {
		wg.Add(1)
		go func() {
			defer wg.Done()
			part, err := a.nodeMetrics(r, n.AdvertiseURL)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, fmt.Errorf("node %s: %w", n.Name, err))
				return
			}
			for id, m := range part {
				merged[id] = m
			}
		}()
	}
	wg.Wait()
	if len(alive) > 0 && len(failed) == len(alive) {
		httperr.Error(w, http.StatusBadGateway, "no node answered: "+errors.Join(failed...).Error())
		return nil
	}
	if len(failed) > 0 {
		// A node's sandboxes are missing from the answer, as a sandbox
		// without a sample yet is: the rest is still worth having.
		log.G(r.Context()).Warn("batch metrics", "err", errors.Join(failed...))
	}
	writeJSON(w, http.StatusOK, map[string]any{"sandboxes": merged})
	return nil
}

// nodeMetrics is one node's answer to r.
func (a *API) nodeMetrics(r *http.Request, base string) (map[string]json.RawMessage, error) {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, base+r.URL.RequestURI(), nil)
	if err != nil {
		return nil, err
	}
	req.Header = r.Header.Clone()
	a.fwd.authorize(req, r, &dest{})
	resp, err := a.fwd.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetricsBody))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("answered %s: %s", resp.Status, body)
	}
	var out struct {
		Sandboxes map[string]json.RawMessage `json:"sandboxes"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("decoding its answer: %w", err)
	}
	return out.Sandboxes, nil
}
