package runtimetest

import (
	"testing"
	"time"
)

// testMemoryAlerts checks, where the backend offers them, that the alerts
// say when they are armed, that memory growing towards the limit raises
// alerts and that the channel closes when the sandbox's processes stop; a
// sandbox that only idles raises none.
func (s *suite) testMemoryAlerts(t *testing.T) {
	b := s.newBackend(t)
	if !b.Capabilities().MemoryAlerts {
		t.Skipf("%s has no memory alerts", b.Name())
	}
	spec := s.spec(NewID())
	spec.Resources.MemoryMB = 256
	inst := s.create(t, b, spec)
	conn := mustWait(t, inst.IP)
	alerts, err := b.MemoryAlerts(t.Context(), spec.ID)
	if err != nil {
		t.Fatalf("MemoryAlerts: %v", err)
	}
	select {
	case _, ok := <-alerts:
		if !ok {
			t.Fatal("the alert channel closed before it was armed")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no alert that the ladder is armed")
	}
	select {
	case <-alerts:
		t.Fatal("an alert while the sandbox idles")
	case <-time.After(500 * time.Millisecond):
	}
	if out, err := conn.Call("alloc 180", 30*time.Second); err != nil || out != "ok" {
		t.Fatalf("alloc = %q, %v", out, err)
	}
	select {
	case _, ok := <-alerts:
		if !ok {
			t.Fatal("the alert channel closed instead of alerting")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no alert with 180 of 256 MiB in use")
	}
	s.destroy(t, b, spec.ID)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case _, ok := <-alerts:
			if !ok {
				return
			}
		case <-deadline:
			t.Fatal("the alert channel stays open after Destroy")
		}
	}
}
