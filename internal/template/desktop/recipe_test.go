package desktop

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestRecipeHash(t *testing.T) {
	t.Parallel()
	mk := func(baseRecipe string, files []rootFile, pkgs ...string) string {
		r, err := newRecipe(baseRecipe, pkgs, files)
		if err != nil {
			t.Fatal(err)
		}
		return r.hash()
	}
	edit := func(fn func(fs []rootFile) []rootFile) []rootFile {
		return fn(slices.Clone(configFiles))
	}
	ref := mk("b1", configFiles, "xvfb", "xfwm4")
	bumped, err := newRecipe("b1", []string{"xvfb", "xfwm4"}, configFiles)
	if err != nil {
		t.Fatal(err)
	}
	bumped.ConfigVersion++
	cases := []struct {
		name string
		hash string
		same bool
	}{
		{"same inputs", mk("b1", configFiles, "xvfb", "xfwm4"), true},
		{"order and duplicates ignored", mk("b1", configFiles, "xfwm4", "xvfb", "xvfb"), true},
		{"new base changes it", mk("b2", configFiles, "xvfb", "xfwm4"), false},
		{"added package changes it", mk("b1", configFiles, "xvfb", "xfwm4", "scrot"), false},
		{"removed package changes it", mk("b1", configFiles, "xvfb"), false},
		{"config version changes it", bumped.hash(), false},
		{"added file changes it", mk("b1", edit(func(f []rootFile) []rootFile {
			return append(f, rootFile{name: "etc/x", mode: 0o644, data: []byte("x")})
		}), "xvfb", "xfwm4"), false},
		{"removed file changes it", mk("b1", configFiles[1:], "xvfb", "xfwm4"), false},
		{"edited file changes it", mk("b1", edit(func(f []rootFile) []rootFile {
			f[1].data = append(slices.Clone(f[1].data), ' ')
			return f
		}), "xvfb", "xfwm4"), false},
		{"file mode changes it", mk("b1", edit(func(f []rootFile) []rootFile {
			f[1].mode = 0o600
			return f
		}), "xvfb", "xfwm4"), false},
		{"link target changes it", mk("b1", edit(func(f []rootFile) []rootFile {
			f[0].link = "/usr/share/other"
			return f
		}), "xvfb", "xfwm4"), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if (c.hash == ref) != c.same {
				t.Errorf("hash %s vs %s: same=%v, want %v", c.hash, ref, c.hash == ref, c.same)
			}
		})
	}
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(ref) {
		t.Errorf("hash %q is not 16 hex characters", ref)
	}
}

func TestPackages(t *testing.T) {
	t.Parallel()
	if !slices.IsSorted(Packages) || len(slices.Compact(slices.Clone(Packages))) != len(Packages) {
		t.Error("Packages should stay sorted and unique")
	}
	// What the SDK runs by name (docs/desktop.md, "What the SDK runs").
	for _, want := range []string{"xvfb", "x11-utils", "xfce4-session", "xfwm4", "xfdesktop4", "dbus-x11",
		"xdotool", "scrot", "x11-xserver-utils", "x11vnc", "novnc", "python3-websockify", "net-tools"} {
		if !slices.Contains(Packages, want) {
			t.Errorf("Packages lacks %s", want)
		}
	}
}

func TestConfigFilesValid(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, f := range configFiles {
		if err := f.check(); err != nil {
			t.Error(err)
		}
		if seen[f.name] {
			t.Errorf("%s listed twice", f.name)
		}
		seen[f.name] = true
	}
	bad := []rootFile{
		{name: "", mode: 0o644},
		{name: "/etc/x", mode: 0o644},
		{name: "../x", mode: 0o644},
		{name: "etc/../../x", mode: 0o644},
		{name: "etc/x", link: "/y", data: []byte("z")},
		{name: "etc/x", mode: fs.ModeDir | 0o755},
	}
	for _, f := range bad {
		if err := f.check(); err == nil {
			t.Errorf("%+v accepted", f)
		}
		if _, err := newRecipe("b", nil, []rootFile{f}); err == nil {
			t.Errorf("newRecipe accepted %+v", f)
		}
	}
}

func TestWriteConfig(t *testing.T) {
	t.Parallel()
	rootfs := t.TempDir()
	if err := os.MkdirAll(filepath.Join(rootfs, "usr/share/novnc/utils"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A package's own file at a config path is replaced.
	xfwm4 := filepath.Join(rootfs, "etc/xdg/xfce4/xfconf/xfce-perchannel-xml/xfwm4.xml")
	if err := os.MkdirAll(filepath.Dir(xfwm4), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(xfwm4, []byte("<old/>"), 0o600); err != nil {
		t.Fatal(err)
	}
	for range 2 { // writing twice (a retried step) replaces, not fails
		if err := writeConfig(rootfs, configFiles); err != nil {
			t.Fatal(err)
		}
	}
	if target, err := os.Readlink(filepath.Join(rootfs, "opt/noVNC")); err != nil || target != "/usr/share/novnc" {
		t.Errorf("/opt/noVNC -> %q, %v", target, err)
	}
	got, err := os.ReadFile(xfwm4)
	if err != nil || !strings.Contains(string(got), `name="use_compositing" type="bool" value="false"`) {
		t.Errorf("xfwm4.xml: %v\n%s", err, got)
	}
	if fi, err := os.Stat(xfwm4); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("xfwm4.xml mode: %v %v", fi.Mode(), err)
	}
	entry, err := os.ReadFile(filepath.Join(rootfs, "etc/xdg/autostart/warren-no-blank.desktop"))
	if err != nil || !strings.Contains(string(entry), "\nExec=xset s off -dpms\n") {
		t.Errorf("autostart entry: %v\n%s", err, entry)
	}
}

func TestWriteConfigRefusesDanglingLink(t *testing.T) {
	t.Parallel()
	rootfs := t.TempDir()
	err := writeConfig(rootfs, []rootFile{{name: "opt/noVNC", link: "/usr/share/novnc"}})
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("err = %v, want a not-exist error", err)
	}
	if _, err := os.Lstat(filepath.Join(rootfs, "opt/noVNC")); err == nil {
		t.Error("dangling link written")
	}
}
