package oci

import (
	"context"
	"fmt"

	"github.com/warren-sandbox/warren/internal/network"
	"github.com/warren-sandbox/warren/internal/runtime"
)

func attachOptions(n runtime.Network) network.AttachOptions {
	return network.AttachOptions{AllowInternet: n.AllowInternet, Allow: n.AllowOut, Deny: n.DenyOut, Domains: n.AllowDomains}
}

// SetNetwork implements runtime.Backend.SetNetwork: the rules change in
// the kernel first, then in the record that a restart re-applies.
func (b *Backend) SetNetwork(ctx context.Context, id string, n runtime.Network) error {
	if err := validID(id); err != nil {
		return err
	}
	unlock := b.locks.lock(id)
	defer unlock()
	rec, err := b.record(id)
	if err != nil {
		return err
	}
	eg := network.Egress{AllowInternet: n.AllowInternet, Allow: n.AllowOut, Deny: n.DenyOut, Domains: n.AllowDomains}
	if err := b.net.SetEgress(ctx, id, eg); err != nil {
		return fmt.Errorf("setting network of sandbox %s: %w", id, err)
	}
	rec.AllowInternet, rec.AllowOut, rec.DenyOut, rec.AllowDomains = n.AllowInternet, n.AllowOut, n.DenyOut, n.AllowDomains
	return writeRecord(b.dir(id), rec)
}
