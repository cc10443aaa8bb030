package runtimetest

import (
	"context"
	"net/netip"
	"sync"
	"testing"
)

// testChurn creates and destroys sandboxes one after another; every round
// must leave nothing behind.
func (s *suite) testChurn(t *testing.T) {
	b := s.newBackend(t)
	for i := range s.cfg.cycles {
		id := NewID()
		inst := s.create(t, b, s.spec(id))
		if s.cfg.real {
			c, err := WaitInit(inst.IP, listenTimeout)
			if err != nil {
				t.Fatalf("round %d: %v", i, err)
			}
			c.Close()
		}
		s.destroy(t, b, id)
		if t.Failed() {
			t.Fatalf("round %d failed", i)
		}
	}
	s.sentinelUnchanged(t)
}

// testConcurrentCreates creates several sandboxes at once, checks they got
// distinct addresses and all run, then destroys them at once.
func (s *suite) testConcurrentCreates(t *testing.T) {
	const n = 6
	b := s.newBackend(t)
	ids := make([]string, n)
	ips := make([]netip.Addr, n)
	var wg sync.WaitGroup
	for i := range n {
		ids[i] = NewID()
		wg.Add(1)
		go func() {
			defer wg.Done()
			inst, err := b.Create(t.Context(), s.spec(ids[i]))
			if err != nil {
				t.Errorf("Create %d: %v", i, err)
				return
			}
			ips[i] = inst.IP
		}()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, id := range ids {
			_ = b.Destroy(context.Background(), id)
		}
	})
	if t.Failed() {
		return
	}
	seen := map[netip.Addr]bool{}
	for i, ip := range ips {
		if s.cfg.real {
			if seen[ip] {
				t.Errorf("address %s handed out twice", ip)
			}
			seen[ip] = true
			c, err := WaitInit(ip, listenTimeout)
			if err != nil {
				t.Errorf("sandbox %d: %v", i, err)
				continue
			}
			c.Close()
		}
	}
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := b.Destroy(t.Context(), id); err != nil {
				t.Errorf("Destroy %s: %v", id, err)
			}
		}()
	}
	wg.Wait()
	for _, id := range ids {
		s.assertGone(t, b, id)
	}
}
