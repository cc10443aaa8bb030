package layershare

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

// The protocol between nodes: the full key of the layer served, and the
// SHA-256 of the tar stream as a trailer, so a stream cut short or
// corrupted on the way is refused even when it still parses as a tar.
const (
	keyHeader  = "Warren-Layer-Key"
	sumTrailer = "Warren-Layer-Sha256"
	// Path is where a node serves its layers; {key} is a short or full key.
	Path = "/internal/layers/"
)

// fetch pulls layer short from the first live peer that hands it over,
// trying those that list the template as cached first.
func (r *Resolver) fetch(ctx context.Context, tplID, short string) (string, error) {
	peers, err := r.peers(ctx, tplID)
	if err != nil {
		return "", err
	}
	if len(peers) == 0 {
		return "", unavailable(tplID, short, "no other node is alive")
	}
	var errs []string
	for _, n := range peers {
		start := time.Now()
		dir, err := r.fetchFrom(ctx, n, short)
		if err == nil {
			log.G(ctx).Info("pulled a template layer from a peer", "template", tplID, "layer", short,
				"peer", n.Name, "took", time.Since(start).Round(time.Millisecond))
			return dir, nil
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("pulling layer %s of template '%s': %w", short, tplID, ctx.Err())
		}
		log.G(ctx).Warn("pulling a template layer from a peer", "template", tplID, "layer", short, "peer", n.Name, "err", err)
		errs = append(errs, n.Name+": "+err.Error())
	}
	return "", unavailable(tplID, short, strings.Join(errs, "; "))
}

// peers are the live nodes but this one, those that list tplID first.
func (r *Resolver) peers(ctx context.Context, tplID string) ([]*store.Node, error) {
	nodes, err := r.opts.Store.ListNodes(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the cluster's nodes: %w", err)
	}
	now := time.Now()
	var out []*store.Node
	for _, n := range nodes {
		if n.Name != r.opts.Self && n.AdvertiseURL != "" && n.Alive(now, r.opts.DeadAfter) {
			out = append(out, n)
		}
	}
	slices.SortStableFunc(out, func(a, b *store.Node) int {
		return cachedRank(a, tplID) - cachedRank(b, tplID)
	})
	return out, nil
}

func cachedRank(n *store.Node, tplID string) int {
	if slices.Contains(n.Templates, tplID) {
		return 0
	}
	return 1
}

// fetchFrom pulls layer short from node n into this node's first store.
func (r *Resolver) fetchFrom(ctx context.Context, n *store.Node, short string) (string, error) {
	url := strings.TrimRight(n.AdvertiseURL, "/") + Path + short
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", fmt.Errorf("bad advertise URL %q: %w", n.AdvertiseURL, err)
	}
	r.opts.Cluster.Sign(req, "")
	resp, err := r.opts.Client.Do(req)
	if err != nil {
		return "", fmt.Errorf("asking for layer: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return "", fmt.Errorf("answered %s: %s", resp.Status, strings.TrimSpace(string(msg)))
	}
	key := resp.Header.Get(keyHeader)
	if !layer.ValidKey(key) || !strings.HasPrefix(key, short) {
		return "", fmt.Errorf("answered with layer key %q, not one of %s", key, short)
	}
	return r.opts.Stores[0].Create(ctx, key, func(dir string) error {
		return receive(ctx, resp, dir, r.opts.Limit)
	})
}

// receive extracts the layer tar of resp into dir with every protection
// Extract has against hostile archives, then checks the stream's
// checksum; an error leaves dir for Store.Create to throw away.
func receive(ctx context.Context, resp *http.Response, dir string, limit int64) error {
	h := sha256.New()
	body := io.TeeReader(resp.Body, h)
	err := layer.Extract(ctx, body, dir, layer.Options{Whiteouts: true, MaxEntries: layer.ImageMaxEntries, Limit: limit})
	if err != nil {
		return fmt.Errorf("extracting the layer: %w", err)
	}
	// The trailer arrives after the body's end; what follows the tar's
	// end marker is at most its padding.
	if _, err := io.Copy(io.Discard, io.LimitReader(body, 1<<20)); err != nil {
		return fmt.Errorf("reading the layer: %w", err)
	}
	want := resp.Trailer.Get(sumTrailer)
	if want == "" {
		return errors.New("the layer's stream ended without its checksum: cut short")
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("the layer's stream has checksum %s, the peer sent %s", got, want)
	}
	return nil
}
