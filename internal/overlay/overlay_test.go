package overlay

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/testutil"
)

func TestCheck(t *testing.T) {
	for _, tt := range []struct {
		n    int
		fail bool
	}{{1, false}, {MaxLayers, false}, {MaxLayers + 1, true}} {
		err := Check(tt.n)
		if (err != nil) != tt.fail || (tt.fail && !errors.Is(err, ErrTooManyLayers)) {
			t.Errorf("Check(%d) = %v", tt.n, err)
		}
	}
}

// layers makes n layer dirs under a long path (as a data dir could be),
// each with its own file and a shared one that the top layer must win.
func layers(t *testing.T, n int) []string {
	root := filepath.Join(t.TempDir(), "a-data-dir-with-a-rather-long-name", "layers")
	var out []string
	for i := range n {
		d := filepath.Join(root, fmt.Sprintf("layer-key-%012d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, body := range map[string]string{fmt.Sprintf("f%d", i): "x", "shared": fmt.Sprint(i)} {
			if err := os.WriteFile(filepath.Join(d, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out = append([]string{d}, out...) // top first: the last made is on top
	}
	return out
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// TestMountManyLayers: a stack of MaxLayers layers with long paths mounts,
// both read-only and writable, every layer shows, the top one wins, and
// no descriptor is left open; one more layer is refused before mounting.
func TestMountManyLayers(t *testing.T) {
	testutil.RequiresRoot(t)
	lowers := layers(t, MaxLayers)
	for _, writable := range []bool{false, true} {
		t.Run(fmt.Sprintf("writable=%v", writable), func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "merged")
			upper, work := "", ""
			flags := uintptr(unix.MS_RDONLY)
			if writable {
				upper, work, flags = filepath.Join(dir, "upper"), filepath.Join(dir, "work"), 0
				for _, d := range []string{upper, work} {
					if err := os.Mkdir(d, 0o755); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.Mkdir(target, 0o755); err != nil {
				t.Fatal(err)
			}
			before := openFDs(t)
			if err := Mount(target, lowers, upper, work, []string{"index=off", "xino=off"}, flags); err != nil {
				t.Fatal(err)
			}
			defer unix.Unmount(target, unix.MNT_DETACH)
			if after := openFDs(t); after != before {
				t.Errorf("open descriptors: %d before the mount, %d after", before, after)
			}
			for _, name := range []string{"f0", fmt.Sprintf("f%d", MaxLayers-1)} {
				if _, err := os.Stat(filepath.Join(target, name)); err != nil {
					t.Errorf("a layer's file is missing: %v", err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(target, "shared")); err != nil || string(b) != fmt.Sprint(MaxLayers-1) {
				t.Errorf("shared = %q, %v; want the top layer's %d", b, err, MaxLayers-1)
			}
			err := os.WriteFile(filepath.Join(target, "new"), []byte("y"), 0o644)
			if writable != (err == nil) {
				t.Errorf("writing with writable=%v: %v", writable, err)
			}
		})
	}
	err := Mount(t.TempDir(), layers(t, MaxLayers+1), "", "", nil, unix.MS_RDONLY)
	if !errors.Is(err, ErrTooManyLayers) {
		t.Errorf("%d layers: %v, want ErrTooManyLayers", MaxLayers+1, err)
	}
	if err := Mount(t.TempDir(), []string{filepath.Join(t.TempDir(), "missing")}, "", "", nil, unix.MS_RDONLY); err == nil {
		t.Error("a missing layer mounted")
	}
}
