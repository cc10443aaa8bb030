package server

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveEmptyRunRoot: empty runtime dirs and the root go; a runtime
// dir with state in it stays, and so does the root above it.
func TestRemoveEmptyRunRoot(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "run")
	for _, d := range []string{"runc", "runsc"} {
		if err := os.MkdirAll(filepath.Join(empty, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	removeEmptyRunRoot(empty)
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("an empty run root is still there: %v", err)
	}

	held := filepath.Join(t.TempDir(), "run")
	if err := os.MkdirAll(filepath.Join(held, "runc"), 0o700); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(held, "runsc", "x.state")
	if err := os.MkdirAll(filepath.Dir(state), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(state, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	removeEmptyRunRoot(held)
	if _, err := os.Stat(state); err != nil {
		t.Errorf("a runtime's state was removed: %v", err)
	}
	if _, err := os.Stat(filepath.Join(held, "runc")); !os.IsNotExist(err) {
		t.Errorf("the empty runc dir is still there: %v", err)
	}
}
