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

// newDiskPool starts empty; the first create's size becomes the pool's
// (the sandbox manager's default disk), and a later different size
// switches it.
func newDiskPool(stateRoot string, want int) (*diskPool, error) {
	dir := filepath.Join(stateRoot, ".diskpool")
	// Images of an earlier run may be of another size: start afresh.
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &diskPool{dir: dir, want: want}, nil
}

// take moves a ready image of sizeMB to dst; false when none is ready.
func (p *diskPool) take(sizeMB int, dst string) bool {
	if p == nil || sizeMB <= 0 {
		return false
	}
	p.mu.Lock()
	if sizeMB != p.sizeMB {
		// Another size: drop the images of the old one, keep this one.
		for _, img := range p.ready {
			_ = os.Remove(img)
		}
		p.ready, p.sizeMB = nil, sizeMB
	}
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
			size := p.sizeMB
			p.mu.Unlock()
			if err := formatDisk(img, size); err != nil {
				if !strings.Contains(err.Error(), "exists") {
					log.G(ctx).Warn("preparing a sandbox disk", "err", err)
				}
				return
			}
			p.mu.Lock()
			if size == p.sizeMB {
				p.ready = append(p.ready, img)
			} else {
				_ = os.Remove(img) // the pool changed size meanwhile
			}
			p.mu.Unlock()
		}
	}()
}
