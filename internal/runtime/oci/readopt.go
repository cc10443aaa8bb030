package oci

import (
	"context"
	"errors"
	"fmt"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// readopt runs once in New. Sandboxes with an instance record get their
// address re-reserved (and egress policy restored); state dirs without one
// are creations an earlier process never finished, and are destroyed.
func (b *Backend) readopt(ctx context.Context) error {
	ids, err := b.stateDirs()
	if err != nil {
		return err
	}
	for _, id := range ids {
		rec, err := readRecord(b.dir(id))
		if errors.Is(err, errdefs.ErrNotFound) {
			log.G(ctx).Warn("destroying half-created sandbox", "sandbox", id, "backend", b.name)
			if err := b.Destroy(ctx, id); err != nil {
				log.G(ctx).Error("destroying half-created sandbox", "sandbox", id, "err", err)
			}
			continue
		}
		if err != nil {
			log.G(ctx).Error("unreadable sandbox record; leaving it for Destroy", "sandbox", id, "err", err)
			continue
		}
		if _, err := b.net.Reserve(ctx, id, rec.IP, rec.Egress); err != nil {
			return fmt.Errorf("re-reserving %s for sandbox %s: %w", rec.IP, id, err)
		}
		b.watchLog(id)
	}
	return nil
}
