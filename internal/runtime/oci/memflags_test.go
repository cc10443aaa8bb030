package oci

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// fakeRunscHelp writes a runtime binary that prints help text for the
// checkpoint and restore subcommands as runsc does (on stderr, exiting
// non-zero), listing the given flag names.
func fakeRunscHelp(t *testing.T, checkpoint, restore []string) string {
	t.Helper()
	help := func(flags []string) string {
		out := "echo '<sub> [flags] <container id> - a subcommand.' >&2\n"
		for _, f := range flags {
			// A description line that holds a dash word is not a flag.
			out += "printf '  -%s value\\n    \\tabout it, see -" + f + "-docs\\n' '" + f + "' >&2\n"
		}
		return out
	}
	script := "#!/bin/sh\ncase \"$1\" in\ncheckpoint)\n" + help(checkpoint) + ";;\nrestore)\n" + help(restore) +
		";;\nesac\necho \"failed to parse flags for \\\"$1\\\": flag: help requested\" >&2\nexit 128\n"
	bin := filepath.Join(t.TempDir(), "runsc")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return bin
}

// TestProbeMemoryFlags: the checkpoint and restore flags for a fast
// resume are used where runsc lists them, and only there.
func TestProbeMemoryFlags(t *testing.T) {
	current := []string{"compression", "direct", "exclude-committed-zero-pages", "image-path"}
	for _, tc := range []struct {
		name                  string
		opts                  Options
		checkpoint, restore   []string // flags the fake runsc lists
		wantCkpt, wantRestore []string
		wantDirect            bool
		wantMissing           []string
	}{
		{name: "current runsc", opts: Options{Runtime: Runsc},
			checkpoint: current, restore: []string{"background", "direct", "image-path"},
			wantCkpt:    []string{"--compression=none"},
			wantRestore: []string{"--background"}, wantDirect: true},
		{name: "runsc without direct reads", opts: Options{Runtime: Runsc},
			checkpoint: current, restore: []string{"background", "image-path"},
			wantCkpt:    []string{"--compression=none"},
			wantRestore: []string{"--background"}, wantMissing: []string{"restore -direct"}},
		{name: "runsc without background loading", opts: Options{Runtime: Runsc},
			checkpoint: []string{"image-path", "leave-running"}, restore: []string{"image-path", "detach"},
			wantMissing: []string{"checkpoint -compression", "restore -background", "restore -direct"}},
		{name: "eager restores asked for", opts: Options{Runtime: Runsc, EagerRestore: true},
			checkpoint: current, restore: []string{"background"}},
		{name: "runc", opts: Options{Runtime: Runc},
			checkpoint: current, restore: []string{"background"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bin := fakeRunscHelp(t, tc.checkpoint, tc.restore)
			got := probeMemoryFlags(t.Context(), tc.opts, bin)
			if !slices.Equal(got.checkpoint, tc.wantCkpt) || !slices.Equal(got.restore, tc.wantRestore) ||
				got.direct != tc.wantDirect || !slices.Equal(got.missing, tc.wantMissing) {
				t.Errorf("probe = %+v; want checkpoint %q, restore %q, direct %v, missing %q",
					got, tc.wantCkpt, tc.wantRestore, tc.wantDirect, tc.wantMissing)
			}
		})
	}
}

// TestRestoreArgs: --direct goes with --background, for an image whose
// pages file opens with O_DIRECT, and never otherwise.
func TestRestoreArgs(t *testing.T) {
	withPages := t.TempDir()
	pages := filepath.Join(withPages, "pages.img")
	if err := os.WriteFile(pages, make([]byte, 8192), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(pages, unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Skipf("the temp dir's filesystem refuses O_DIRECT: %v", err)
	}
	_ = unix.Close(fd)
	bg := []string{"--background"}
	for _, tc := range []struct {
		name string
		mem  memoryFlags
		dir  string
		want []string
	}{
		{"background and direct", memoryFlags{restore: bg, direct: true}, withPages, []string{"--background", "--direct"}},
		{"no pages file", memoryFlags{restore: bg, direct: true}, t.TempDir(), bg},
		{"runsc without direct", memoryFlags{restore: bg}, withPages, bg},
		{"eager restore", memoryFlags{direct: true}, withPages, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.mem.restoreArgs(tc.dir); !slices.Equal(got, tc.want) {
				t.Errorf("restoreArgs = %q; want %q", got, tc.want)
			}
			if len(tc.mem.restore) > 0 && len(tc.mem.restore) != len(bg) {
				t.Errorf("restoreArgs changed the flags it was given: %q", tc.mem.restore)
			}
		})
	}
}
