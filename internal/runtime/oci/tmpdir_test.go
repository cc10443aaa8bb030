package oci

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// TestTmpBindRefusesSymlinks: a /tmp that is not a plain directory is
// never bound, at create or at a later start, so the runtime never
// follows a link the sandbox made onto the host's filesystem.
func TestTmpBindRefusesSymlinks(t *testing.T) {
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, tmp string)
		want  bool
	}{
		{"missing", func(*testing.T, string) {}, true},
		{"directory", func(t *testing.T, tmp string) { mustDo(t, os.Mkdir(tmp, 0o755)) }, true},
		{"symlink to the host's root", func(t *testing.T, tmp string) { mustDo(t, os.Symlink("/", tmp)) }, false},
		{"file", func(t *testing.T, tmp string) { mustDo(t, os.WriteFile(tmp, nil, 0o644)) }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			rootfs := filepath.Join(dir, rootfsDir)
			mustDo(t, os.Mkdir(rootfs, 0o755))
			tt.setup(t, filepath.Join(rootfs, "tmp"))
			ok, err := prepareTmp(rootfs)
			if err != nil || ok != tt.want {
				t.Fatalf("prepareTmp = %v, %v; want %v", ok, err, tt.want)
			}
			if tt.name == "missing" {
				fi, err := os.Lstat(filepath.Join(rootfs, "tmp"))
				if err != nil || fi.Mode().Perm() != 0o777 || fi.Mode()&os.ModeSticky == 0 {
					t.Fatalf("created /tmp: %v %v, want drwxrwxrwt", fi.Mode(), err)
				}
			}
			// A bundle written while /tmp was a directory, checked again
			// before a start.
			mustDo(t, writeSpec(dir, &specs.Spec{Mounts: []specs.Mount{tmpMount(rootfs)}}))
			mustDo(t, guardTmpBind(dir))
			data, err := os.ReadFile(filepath.Join(dir, configFile))
			mustDo(t, err)
			var s specs.Spec
			mustDo(t, json.Unmarshal(data, &s))
			if bound := len(s.Mounts) == 1; bound != tt.want {
				t.Fatalf("after the check before a start, /tmp bound = %v, want %v", bound, tt.want)
			}
		})
	}
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
