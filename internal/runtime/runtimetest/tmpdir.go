package runtimetest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/warren-sandbox/warren/internal/runtime"
)

// testTmpOnDisk checks that /tmp is part of the sandbox's disk, as on a
// normal machine: what the template holds there is visible, and what the
// sandbox writes there survives a reboot without a memory checkpoint.
// (gVisor mounts a tmpfs of its own over an empty /tmp unless told not
// to, which loses both a build's /tmp and the sandbox's.)
func (s *suite) testTmpOnDisk(t *testing.T) {
	b := s.newBackend(t)
	for _, tt := range []struct {
		name     string
		template map[string]string // files in the template's /tmp
	}{
		{"empty", nil},
		{"with files", map[string]string{"from-build": "built"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rootfs := NewRootfs(t, filepath.Join(t.TempDir(), "rootfs"))
			for name, content := range tt.template {
				if err := os.WriteFile(filepath.Join(rootfs, "tmp", name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			id := NewID()
			spec := s.spec(id)
			spec.Rootfs = rootfs
			inst := s.create(t, b, spec)
			c := mustWait(t, inst.IP)
			for name, content := range tt.template {
				if out := mustCall(t, c, "read /tmp/"+name); out != `"`+content+`"` {
					t.Errorf("template file /tmp/%s = %s, want %q", name, out, content)
				}
			}
			if out := mustCall(t, c, "write /tmp/written kept"); out != "ok" {
				t.Fatalf("write: %s", out)
			}
			c.Close()
			if err := b.Stop(t.Context(), id, runtime.StopOptions{}); err != nil {
				t.Fatal(err)
			}
			inst, err := b.Start(t.Context(), id, runtime.StartOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c = mustWait(t, inst.IP)
			defer c.Close()
			if out := mustCall(t, c, "read /tmp/written"); out != `"kept"` {
				t.Errorf("/tmp/written after a reboot = %s, want it kept on disk", out)
			}
			s.destroy(t, b, id)
		})
	}
}
