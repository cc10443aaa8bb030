package cachedfs

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestEntryBuild(t *testing.T) {
	t.Parallel()
	type marker struct {
		Recipe string `json:"recipe"`
	}
	boom := errors.New("boom")
	cases := []struct {
		name      string
		hitLocked bool // another process finished while we waited for the lock
		build     func(e Entry, s Staging) error
		wantErr   error
		published bool
	}{
		{"success publishes", false, func(e Entry, s Staging) error {
			if err := os.Mkdir(s.Rootfs(), 0o755); err != nil {
				return err
			}
			if _, err := io.WriteString(s.Log, "built\n"); err != nil {
				return err
			}
			return Publish(s.Dir, e.Final, marker{Recipe: "h1"})
		}, nil, true},
		{"failure removes the tmp dir", false, func(e Entry, s Staging) error {
			if err := os.Mkdir(s.Rootfs(), 0o755); err != nil {
				return err
			}
			return boom
		}, boom, false},
		{"hit after the lock skips the build", true, func(Entry, Staging) error {
			return errors.New("build ran after a hit")
		}, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cache := t.TempDir()
			e := NewEntry(cache, "tpl", "h1")
			if err := os.MkdirAll(e.Templates, 0o755); err != nil {
				t.Fatal(err)
			}
			// A leftover of an interrupted build is removed first.
			leftover := filepath.Join(e.Templates, "tpl-h0.tmp-123")
			if err := os.Mkdir(leftover, 0o755); err != nil {
				t.Fatal(err)
			}
			hit := func() bool { return c.hitLocked }
			rootfs, err := e.Build(t.Context(), io.Discard, hit, func(s Staging) error { return c.build(e, s) })
			if !errors.Is(err, c.wantErr) {
				t.Fatalf("Build err = %v, want %v", err, c.wantErr)
			}
			if err == nil && rootfs != filepath.Join(cache, "templates", "tpl-h1", "rootfs") {
				t.Errorf("rootfs = %q", rootfs)
			}
			var m marker
			pubErr := ReadMarker(e.Final, "h1", &m)
			if (pubErr == nil) != c.published {
				t.Errorf("published = %v (%v), want %v", pubErr == nil, pubErr, c.published)
			}
			tmps, _ := filepath.Glob(filepath.Join(e.Templates, "tpl-h1.tmp-*"))
			if len(tmps) != 0 {
				t.Errorf("tmp dirs left: %v", tmps)
			}
			if _, err := os.Stat(leftover); (err == nil) != c.hitLocked {
				t.Errorf("leftover stat: %v (hit %v)", err, c.hitLocked)
			}
		})
	}
}
