package lifecycle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// TestBuildSandbox: a build sandbox starts over the given layers with envd
// answering, keeps its writable layer when asked, and is gone after
// Destroy; a request the server cannot honour leaves nothing behind.
func TestBuildSandbox(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		spec    func(e *env) BuildSpec
		keep    bool
		wantErr error
	}{
		{name: "layer kept", spec: func(e *env) BuildSpec { return BuildSpec{Layers: []string{e.rootfs}} }, keep: true},
		{name: "layer dropped", spec: func(e *env) BuildSpec { return BuildSpec{Layers: []string{e.rootfs}, CPUCount: 2} }},
		{name: "unknown runtime", spec: func(e *env) BuildSpec { return BuildSpec{Layers: []string{e.rootfs}, Backend: "nope"} }, wantErr: errdefs.ErrUnavailable},
		{name: "no layers", spec: func(*env) BuildSpec { return BuildSpec{} }, wantErr: errdefs.ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			box, err := e.m.StartBuildSandbox(e.ctx, tc.spec(e))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("StartBuildSandbox: %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if n := len(e.envd.calls()); n != 1 {
				t.Errorf("envd initialised %d times, want 1", n)
			}
			if base, client := box.Envd(); !strings.HasPrefix(base, "http://") || client == nil {
				t.Errorf("Envd() = %q, %v", base, client)
			}
			dir := filepath.Join(t.TempDir(), "layer")
			if tc.keep {
				if err := box.KeepLayer(e.ctx, dir); err != nil {
					t.Fatal(err)
				}
			}
			box.Destroy(context.Background())
			if _, err := os.Stat(dir); (err == nil) != tc.keep {
				t.Errorf("layer dir after the step: %v, want kept %v", err, tc.keep)
			}
			if left, err := e.b.List(e.ctx); err != nil || len(left) != 0 {
				t.Errorf("build sandboxes left after Destroy: %d (%v)", len(left), err)
			}
			if list, _ := e.m.List(e.ctx); len(list) != 0 {
				t.Errorf("a build sandbox was listed: %v", list)
			}
		})
	}
}
