package oci

import (
	"errors"
	"slices"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/runtime"
)

// TestRemount: a start re-points the bundle's volume mounts (not runsc's
// /tmp bind at the same target) and refuses other targets, changing
// nothing.
func TestRemount(t *testing.T) {
	oldVol, newVol, tmpVol, newTmpVol := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	tests := []struct {
		name    string
		mounts  []runtime.Mount
		wantErr bool
		want    map[string]string // destination -> source of the bind mounts after
	}{
		{"moved", []runtime.Mount{{Source: newVol, Target: "/mnt/vol"}, {Source: newTmpVol, Target: "/tmp"}}, false,
			map[string]string{"/mnt/vol": newVol, "/tmp": newTmpVol, "rootfs-tmp": "/rootfs/tmp"}},
		{"same", []runtime.Mount{{Source: oldVol, Target: "/mnt/vol"}, {Source: tmpVol, Target: "/tmp"}}, false,
			map[string]string{"/mnt/vol": oldVol, "/tmp": tmpVol, "rootfs-tmp": "/rootfs/tmp"}},
		{"other target", []runtime.Mount{{Source: newVol, Target: "/mnt/other"}, {Source: tmpVol, Target: "/tmp"}}, true, nil},
		{"one missing", []runtime.Mount{{Source: newVol, Target: "/mnt/vol"}}, true, nil},
		{"over /proc", []runtime.Mount{{Source: newVol, Target: "/proc"}, {Source: tmpVol, Target: "/tmp"}}, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			rec := &record{ID: "x", Mounts: []runtime.Mount{{Source: oldVol, Target: "/mnt/vol"}, {Source: tmpVol, Target: "/tmp"}}}
			s := buildSpec(bundleParams{spec: runtime.Spec{ID: "x", Mounts: rec.Mounts}, rootfs: "/rootfs", tmpBind: true})
			if err := writeSpec(dir, s); err != nil {
				t.Fatal(err)
			}
			err := remount(dir, rec, tt.mounts)
			if tt.wantErr {
				if !errors.Is(err, errdefs.ErrInvalidArgument) {
					t.Fatalf("remount = %v, want ErrInvalidArgument", err)
				}
				tt.want = map[string]string{"/mnt/vol": oldVol, "/tmp": tmpVol, "rootfs-tmp": "/rootfs/tmp"}
			} else if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			_ = editSpec(dir, func(s *specs.Spec) bool {
				for _, m := range s.Mounts {
					switch {
					case m.Type != "bind" || !slices.Contains(m.Options, "rw"):
					case m.Source == "/rootfs/tmp":
						got["rootfs-tmp"] = m.Source
					default:
						got[m.Destination] = m.Source
					}
				}
				return false
			})
			if len(got) != len(tt.want) {
				t.Fatalf("bind mounts %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("bind mounts %v, want %v", got, tt.want)
				}
			}
		})
	}
}
