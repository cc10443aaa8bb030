package oci

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRecoverSettlesMove: a snapshot that died moving the writable layer
// is finished when the layer reached its place (the sandbox stands on it)
// and undone when it did not (the layer stays the sandbox's own).
func TestRecoverSettlesMove(t *testing.T) {
	for _, tc := range []struct {
		name   string
		moved  bool // the rename happened before the crash
		copied bool // a copy was half made beside the destination
	}{
		{"not yet moved", false, false},
		{"half copied", false, true},
		{"moved", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, snaps := t.TempDir(), t.TempDir()
			b := &Backend{name: Runc, opts: Options{StateRoot: root}}
			id := "sb0000000000000000001"
			dir := b.dir(id)
			upper := filepath.Join(dir, upperDir)
			for _, d := range []string{upper, filepath.Join(dir, workDir, "work"), filepath.Join(dir, rootfsDir)} {
				if err := os.MkdirAll(d, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.WriteFile(filepath.Join(upper, "data"), []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
			dst := filepath.Join(snaps, "snap1", snapshotLayer)
			if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
				t.Fatal(err)
			}
			if tc.moved {
				if err := os.Rename(upper, dst); err != nil {
					t.Fatal(err)
				}
			}
			if tc.copied {
				if err := os.MkdirAll(dst+copySuffix, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			rec := &record{ID: id, Backend: Runc, Layers: []string{"/templates/base"}, Stopped: true, Moving: dst}
			if err := writeRecord(dir, rec); err != nil {
				t.Fatal(err)
			}
			if err := b.Recover(context.Background()); err != nil {
				t.Fatal(err)
			}
			got, err := readRecord(dir)
			if err != nil {
				t.Fatal(err)
			}
			wantLayers := []string{"/templates/base"}
			dataAt := upper
			if tc.moved {
				wantLayers, dataAt = []string{dst, "/templates/base"}, dst
			}
			if got.Moving != "" || !slices.Equal(got.Layers, wantLayers) || !got.Stopped {
				t.Fatalf("record after recovery: %+v; want layers %v, not moving", got, wantLayers)
			}
			if b, err := os.ReadFile(filepath.Join(dataAt, "data")); err != nil || string(b) != "mine" {
				t.Fatalf("the layer's data at %s: %q, %v", dataAt, b, err)
			}
			if _, err := os.Stat(dst + copySuffix); !os.IsNotExist(err) {
				t.Fatalf("half copy left: %v", err)
			}
			if tc.moved {
				if _, err := os.Stat(filepath.Join(dir, workDir, "work")); !os.IsNotExist(err) {
					t.Fatal("the old work dir was kept for the new writable layer")
				}
			}
		})
	}
}
