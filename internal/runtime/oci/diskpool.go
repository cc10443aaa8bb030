package oci

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/warren-sandbox/warren/internal/log"
)

// diskPool keeps a few formatted disk images of the default size ready,
// so a create only renames one into place and mounts it: mkfs stays off
// the create path.
type diskPool struct {
	dir    string // on the state root's filesystem, so take is a rename
	sizeMB int
	want   int

	mu      sync.Mutex
	ready   []string
	filling bool
	seq     int
}

func newDiskPool(ctx context.Context, stateRoot string, sizeMB, want int) (*diskPool, error) {
	dir := filepath.Join(stateRoot, ".diskpool")
	// Images of an earlier run may be of another size: start afresh.
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &diskPool{dir: dir, sizeMB: sizeMB, want: want}
	p.refill(ctx)
	return p, nil
}

// take moves a ready image of sizeMB to dst; false when none is ready.
func (p *diskPool) take(sizeMB int, dst string) bool {
	if p == nil || sizeMB != p.sizeMB {
		return false
	}
	p.mu.Lock()
	var img string
	if n := len(p.ready); n > 0 {
		img, p.ready = p.ready[n-1], p.ready[:n-1]
	}
	p.mu.Unlock()
	p.refill(context.Background())
	return img != "" && os.Rename(img, dst) == nil
}

// refill formats images in the background until want are ready.
func (p *diskPool) refill(ctx context.Context) {
	p.mu.Lock()
	if p.filling || len(p.ready) >= p.want {
		p.mu.Unlock()
		return
	}
	p.filling = true
	p.mu.Unlock()
	go func() {
		defer func() {
			p.mu.Lock()
			p.filling = false
			p.mu.Unlock()
		}()
		for {
			p.mu.Lock()
			if len(p.ready) >= p.want {
				p.mu.Unlock()
				return
			}
			p.seq++
			img := filepath.Join(p.dir, fmt.Sprintf("disk-%d.img", p.seq))
			p.mu.Unlock()
			if err := formatDisk(img, p.sizeMB); err != nil {
				if !strings.Contains(err.Error(), "exists") {
					log.G(ctx).Warn("preparing a sandbox disk", "err", err)
				}
				return
			}
			p.mu.Lock()
			p.ready = append(p.ready, img)
			p.mu.Unlock()
		}
	}()
}
