package memstore_test

import (
	"errors"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/memstore"
	"github.com/warren-sandbox/warren/internal/store/storetest"
)

func TestStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return memstore.New() })
}

func TestClosed(t *testing.T) {
	s := memstore.New()
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := s.ListSandboxes(t.Context()); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("ListSandboxes after Close: got %v, want ErrUnavailable", err)
	}
	if err := s.CreateSandbox(t.Context(), &store.Sandbox{ID: "x"}); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Errorf("CreateSandbox after Close: got %v, want ErrUnavailable", err)
	}
}
