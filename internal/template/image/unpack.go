package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"sync"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/template/layer"
)

type unpackOptions struct {
	verb  string // "pulling", "importing"
	sizes bool   // show layer sizes: free from a registry, a full compression pass for a tarball
	jobs  int
}

// unpack makes sure every layer is in the store and returns their keys top
// first. A layer that occurs twice is kept only at its top position: the
// upper copy already overrides all the lower one could show, and overlayfs
// refuses the same lowerdir twice.
func (p *Puller) unpack(ctx context.Context, layers []v1.Layer, progress func(string), o unpackOptions) ([]string, error) {
	n := len(layers)
	ids := make([]v1.Hash, n)
	for i, l := range layers {
		d, err := l.DiffID()
		if err != nil {
			return nil, fmt.Errorf("layer %d: %w", i+1, err)
		}
		if d.Algorithm != "sha256" || !layer.ValidKey(d.Hex) {
			return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("layer %d has an unsupported diffID %q", i+1, d))
		}
		ids[i] = d
	}
	var mu sync.Mutex
	say := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		progress(s)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
		sem      = make(chan struct{}, max(o.jobs, 1))
	)
	for i, l := range layers {
		label := fmt.Sprintf("layer %d/%d %s", i+1, n, shortDigest(ids[i]))
		if p.layers.Has(ids[i].Hex) {
			say(label + " already present")
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := p.fetchLayer(ctx, l, ids[i], label, say, o); err != nil {
				once.Do(func() { firstErr = err; cancel() })
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return topFirstUnique(ids), nil
}

func topFirstUnique(ids []v1.Hash) []string {
	seen := make(map[string]bool, len(ids))
	var keys []string
	for i := len(ids) - 1; i >= 0; i-- {
		if k := ids[i].Hex; !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

func (p *Puller) fetchLayer(ctx context.Context, l v1.Layer, diffID v1.Hash, label string, say func(string), o unpackOptions) error {
	line := o.verb + " " + label
	if o.sizes {
		if size, err := l.Size(); err == nil {
			line += " (" + humanSize(size) + ")"
		}
	}
	say(line)
	_, err := p.layers.Create(ctx, diffID.Hex, func(dir string) error {
		return p.extractLayer(ctx, l, diffID, dir)
	})
	return err
}

// extractLayer writes the layer into dir and checks that its content hashes
// to diffID. Layers are shared by diffID across images, so without the
// check one image could plant content under another image's layer.
func (p *Puller) extractLayer(ctx context.Context, l v1.Layer, diffID v1.Hash, dir string) error {
	rc, err := l.Uncompressed()
	if err != nil {
		return fmt.Errorf("open layer %s: %w", shortDigest(diffID), err)
	}
	defer rc.Close()
	h := sha256.New()
	r := io.TeeReader(rc, h)
	if err := layer.Extract(ctx, r, dir, layer.Options{Whiteouts: true, Limit: p.LayerLimit, MaxEntries: layer.ImageMaxEntries}); err != nil {
		return fmt.Errorf("layer %s: %w", shortDigest(diffID), err)
	}
	// The tar reader stops at the end-of-archive marker; the digest covers
	// the padding after it too (and reading to EOF lets the compressed
	// stream verify its own digest).
	if _, err := io.Copy(io.Discard, r); err != nil {
		return fmt.Errorf("read layer %s: %w", shortDigest(diffID), err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != diffID.Hex {
		return errdefs.New(errdefs.ErrInvalidArgument,
			fmt.Sprintf("layer %s: content does not match its diffID (it hashes to sha256:%s)", diffID, got))
	}
	return nil
}
