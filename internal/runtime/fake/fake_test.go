package fake

import (
	"context"
	"errors"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
	"github.com/warren-sandbox/warren/internal/runtime/runtimetest"
)

func TestConformance(t *testing.T) {
	runtimetest.Run(t, func(t *testing.T) runtime.Backend { return New("") })
}

func spec(t *testing.T, id string) runtime.Spec {
	return runtime.Spec{ID: id, Rootfs: t.TempDir(), Init: runtime.Process{Args: []string{"/envd"}}}
}

func TestFailNextIsConsumedInOrder(t *testing.T) {
	b := New("")
	boom := errors.New("boom")
	b.FailNext(OpCreate, "b", boom)
	b.FailNext(OpCreate, "", errdefs.ErrResourceExhausted)
	if _, err := b.Create(t.Context(), spec(t, "a")); !errors.Is(err, errdefs.ErrResourceExhausted) {
		t.Fatalf("create a = %v, want the any-id failure", err)
	}
	if _, err := b.Create(t.Context(), spec(t, "b")); !errors.Is(err, boom) {
		t.Fatalf("create b = %v, want boom", err)
	}
	if _, err := b.Create(t.Context(), spec(t, "b")); err != nil {
		t.Fatalf("create b again = %v, want success", err)
	}
	if _, err := b.Inspect(t.Context(), "a"); !errors.Is(err, errdefs.ErrNotFound) {
		t.Fatalf("failed create left a: %v", err)
	}
}

func TestCrashReportsStopped(t *testing.T) {
	b := New("")
	if _, err := b.Create(t.Context(), spec(t, "a")); err != nil {
		t.Fatal(err)
	}
	if err := b.Crash("a"); err != nil {
		t.Fatal(err)
	}
	inst, err := b.Inspect(t.Context(), "a")
	if err != nil || inst.State != runtime.StateStopped || inst.Pid != 0 {
		t.Fatalf("after Crash: %+v, %v", inst, err)
	}
	if err := b.Pause(t.Context(), "a"); !errdefs.IsConflict(err) {
		t.Fatalf("Pause(stopped) = %v, want conflict", err)
	}
}

func TestHookSeesEveryCall(t *testing.T) {
	b := New("")
	var ops []Op
	b.SetHook(func(_ context.Context, op Op, id string) error {
		ops = append(ops, op)
		if op == OpStats {
			return errdefs.ErrUnavailable
		}
		return nil
	})
	if _, err := b.Create(t.Context(), spec(t, "a")); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Stats(t.Context(), "a"); !errors.Is(err, errdefs.ErrUnavailable) {
		t.Fatalf("Stats = %v, want the hook's error", err)
	}
	if len(ops) != 2 || len(b.Calls()) != 2 {
		t.Fatalf("hook saw %v, calls %v", ops, b.Calls())
	}
}
