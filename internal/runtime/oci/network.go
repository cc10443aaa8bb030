package oci

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/netpolicy"
)

// SetNetwork implements runtime.Backend.SetNetwork: the rules change in
// the kernel first, then in the record that a restart re-applies.
func (b *Backend) SetNetwork(ctx context.Context, id string, n netpolicy.Egress) error {
	if err := validID(id); err != nil {
		return err
	}
	unlock := b.locks.lock(id)
	defer unlock()
	rec, err := b.record(id)
	if err != nil {
		return err
	}
	if err := b.net.SetEgress(ctx, id, n); err != nil {
		return fmt.Errorf("setting network of sandbox %s: %w", id, err)
	}
	rec.Egress = n.Clone()
	return writeRecord(b.dir(id), rec)
}
