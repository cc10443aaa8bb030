package lifecycle

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/pool"
	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// elsewhere is a layer path recorded by another node: nothing is there.
const elsewhere = "/nonexistent/node-a/layers/aaaaaaaaaaaaaaaaaaaa"

// TestLocalTemplate: a create and a pool refill boot from the paths
// Options.LocalTemplate maps a template's recorded layers to (a cluster
// node's own copies); its error fails the create with its class, leaving
// nothing behind.
func TestLocalTemplate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		fail    error
		pooled  bool
		wantErr error
	}{
		{name: "create boots from the local copy"},
		{name: "pool refill boots from the local copy", pooled: true},
		{name: "no node has the layers", fail: errdefs.New(errdefs.ErrUnavailable, "template 'far': no node has its layers"),
			wantErr: errdefs.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			var rootfs string
			e := newEnvWith(t, func(o *Options) {
				o.LocalTemplate = func(_ context.Context, tpl *store.Template) (*store.Template, error) {
					calls.Add(1)
					if tpl.RootfsPath != elsewhere {
						t.Errorf("LocalTemplate got rootfs %q, want the recorded %q", tpl.RootfsPath, elsewhere)
					}
					if tc.fail != nil {
						return nil, tc.fail
					}
					local := *tpl
					local.RootfsPath, local.Layers = rootfs, nil
					return &local, nil
				}
			})
			rootfs = e.rootfs
			if err := e.st.PutTemplate(e.ctx, &store.Template{ID: "far", RootfsPath: elsewhere}); err != nil {
				t.Fatal(err)
			}
			if tc.pooled {
				p, _ := runPools(t, e, pool.Options{Min: 1, Max: 1, Templates: []string{"far"}})
				waitPool(t, p, 1)
				if calls.Load() == 0 {
					t.Fatal("the pool refilled without LocalTemplate")
				}
			}
			sb, err := e.m.Create(e.ctx, sandbox.CreateRequest{TemplateID: "far", Timeout: time.Minute})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || e.m.Count() != 0 {
					t.Fatalf("Create = %v with %d sandboxes, want %v and none", err, e.m.Count(), tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			inst, err := e.b.Inspect(e.ctx, sb.ID)
			if err != nil || len(inst.Layers) == 0 || inst.Layers[0] != rootfs {
				t.Fatalf("sandbox booted from %+v (%v), want %s", inst, err, rootfs)
			}
			if calls.Load() == 0 {
				t.Fatal("LocalTemplate was not asked")
			}
		})
	}
}
