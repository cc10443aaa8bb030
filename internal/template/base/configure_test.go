package base

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/warren-sandbox/warren/internal/template/cachedfs"
)

// fakeRootfs lays out the few files configure edits, as debootstrap leaves
// them, plus a hostile absolute symlink that must not be followed.
func fakeRootfs(t *testing.T) (rootfs, outside string) {
	t.Helper()
	dir := t.TempDir()
	rootfs = filepath.Join(dir, "rootfs")
	outside = filepath.Join(dir, "host-resolv.conf")
	files := map[string]string{
		"etc/passwd":        "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n",
		"etc/group":         "root:x:0:\nsudo:x:27:\nusers:x:100:\n",
		"etc/shadow":        "root:*:19000:0:99999:7:::\n",
		"etc/gshadow":       "root:*::\nsudo:*::\n",
		"etc/skel/.bashrc":  "# bashrc\n",
		"etc/skel/.profile": "# profile\n",
		"etc/hostname":      "buildhost\n",
	}
	for name, data := range files {
		writeTestFile(t, filepath.Join(rootfs, name), data)
	}
	writeTestFile(t, outside, "nameserver 192.0.2.1\n")
	if err := os.Symlink(outside, filepath.Join(rootfs, "etc/resolv.conf")); err != nil {
		t.Fatal(err)
	}
	return rootfs, outside
}

func writeTestFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestConfigure(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("configure chowns the home directory to 1000; needs root")
	}
	t.Parallel()
	rootfs, outside := fakeRootfs(t)
	// Twice: configure must be idempotent.
	for range 2 {
		if err := configure(rootfs); err != nil {
			t.Fatalf("configure: %v", err)
		}
	}
	want := map[string]string{
		"etc/passwd":  "user:x:1000:1000:Sandbox user,,,:/home/user:/bin/bash\n",
		"etc/group":   "sudo:x:27:user\nusers:x:100:\nuser:x:1000:\n",
		"etc/shadow":  "user:!::0:99999:7:::\n",
		"etc/gshadow": "sudo:*::user\nuser:!::\n",
	}
	for name, suffix := range want {
		if got := readTestFile(t, filepath.Join(rootfs, name)); !strings.HasSuffix(got, suffix) {
			t.Errorf("/%s =\n%s\nwant it to end with\n%s", name, got, suffix)
		}
	}
	if got := readTestFile(t, outside); got != "nameserver 192.0.2.1\n" {
		t.Errorf("host file behind the symlink was changed: %q", got)
	}
	checkModes(t, rootfs)
	checkOwner(t, filepath.Join(rootfs, "home/user"), 1000)
	checkOwner(t, filepath.Join(rootfs, "home/user/.bashrc"), 1000)
	if got := readTestFile(t, filepath.Join(rootfs, "home/user/.profile")); got != "# profile\n" {
		t.Errorf(".profile = %q", got)
	}
	if got := readTestFile(t, filepath.Join(rootfs, "etc/hostname")); got != hostnameFile {
		t.Errorf("/etc/hostname = %q", got)
	}
}

func checkModes(t *testing.T, rootfs string) {
	t.Helper()
	modes := map[string]os.FileMode{
		"etc/sudoers.d/user":   0o440,
		"etc/resolv.conf":      0o644, // a regular file now, not the symlink
		"usr/sbin/policy-rc.d": 0o755,
		".warren":              os.ModeDir | 0o755,
		"root":                 os.ModeDir | 0o700,
		"tmp":                  os.ModeDir | os.ModeSticky | 0o777,
		"home/user":            os.ModeDir | 0o755,
	}
	for name, want := range modes {
		fi, err := os.Lstat(filepath.Join(rootfs, name))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if fi.Mode() != want {
			t.Errorf("/%s mode %v, want %v", name, fi.Mode(), want)
		}
	}
}

func checkOwner(t *testing.T, path string, uid uint32) {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != uid || st.Gid != uid {
		t.Errorf("%s owned by %d:%d, want %d:%d", path, st.Uid, st.Gid, uid, uid)
	}
}

func TestUpsertAccount(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		lines   []string
		want    []string
		wantErr bool
	}{
		{"append", []string{"root:x:0:0::/root:/bin/bash"}, []string{"root:x:0:0::/root:/bin/bash", "user:x:1000:1000::/home/user:/bin/bash"}, false},
		{"replace", []string{"user:x:1000:1000:old:/home/old:/bin/sh"}, []string{"user:x:1000:1000::/home/user:/bin/bash"}, false},
		{"uid taken by another name", []string{"debian:x:1000:1000::/home/debian:/bin/bash"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := upsertAccount(c.lines, 2, "1000", "user:x:1000:1000::/home/user:/bin/bash")
			if (err != nil) != c.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, c.wantErr)
			}
			if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestAddMember(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		lines []string
		want  string
	}{
		{"empty list", []string{"sudo:x:27:"}, "sudo:x:27:user"},
		{"other members", []string{"sudo:x:27:alice"}, "sudo:x:27:alice,user"},
		{"already there", []string{"sudo:x:27:user,alice"}, "sudo:x:27:user,alice"},
		{"group missing", []string{"root:x:0:"}, "sudo:x:27:user"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := addMember(c.lines, "sudo", "user", "sudo:x:27:")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(strings.Join(got, "\n"), c.want) {
				t.Errorf("got %q, want a line %q", got, c.want)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	t.Parallel()
	rootfs := t.TempDir()
	keep := []string{
		"usr/share/doc/git/copyright",
		"usr/share/locale/locale.alias",
		"var/lib/dpkg/status",
		"var/cache/debconf/config.dat",
		"usr/bin/git",
	}
	gone := []string{
		"usr/share/doc/git/changelog.gz",
		"usr/share/doc/git/contrib/x.sh",
		"usr/share/man/man1/git.1.gz",
		"usr/share/locale/de/LC_MESSAGES/git.mo",
		"var/lib/apt/lists/deb.debian.org_debian_dists_bookworm_InRelease",
		"var/lib/apt/lists/partial/x",
		"var/cache/apt/pkgcache.bin",
		"var/cache/apt/archives/git_1_amd64.deb",
		"var/log/dpkg.log",
		"var/log/apt/history.log",
		"var/lib/dpkg/status-old",
		"var/cache/debconf/config.dat-old",
	}
	for _, p := range append(slices.Concat(keep, gone), "var/lib/apt/lists/lock") {
		writeTestFile(t, filepath.Join(rootfs, p), "x")
	}
	if err := cachedfs.Trim(rootfs); err != nil {
		t.Fatalf("trim: %v", err)
	}
	for _, p := range keep {
		if _, err := os.Lstat(filepath.Join(rootfs, p)); err != nil {
			t.Errorf("%s should be kept: %v", p, err)
		}
	}
	for _, p := range gone {
		if _, err := os.Lstat(filepath.Join(rootfs, p)); !os.IsNotExist(err) {
			t.Errorf("%s should be removed (err %v)", p, err)
		}
	}
	// Packages expect these directories to exist even when empty.
	for _, dir := range []string{"var/log/apt", "var/lib/apt/lists/partial", "var/lib/apt/lists/lock"} {
		if _, err := os.Lstat(filepath.Join(rootfs, dir)); err != nil {
			t.Errorf("%s should remain: %v", dir, err)
		}
	}
}

func TestSpeedUpProfile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	orig := "if [ \"$(id -u)\" -eq 0 ]; then\n  PATH=/a\nfi\nif [ \"$(id -u)\" -eq 0 ]; then PS1='# '; fi\n"
	if err := os.WriteFile(filepath.Join(dir, "etc/profile"), []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := speedUpProfile(r); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "etc/profile"))
	if strings.Contains(string(got), `"$(id -u)"`) || strings.Count(string(got), `"${EUID:-$(id -u)}"`) != 2 {
		t.Fatalf("profile not rewritten:\n%s", got)
	}
	// The rewritten test must still work in bash (and as a fallback in sh).
	for _, sh := range []string{"bash", "sh"} {
		out, err := exec.Command(sh, "-c", `. "$0"; echo "$PATH"`, filepath.Join(dir, "etc/profile")).Output()
		if err != nil {
			t.Fatalf("%s: %v", sh, err)
		}
		want := "/a"
		if os.Geteuid() != 0 {
			want = os.Getenv("PATH")
		}
		if strings.TrimSpace(string(out)) != want {
			t.Fatalf("%s: PATH = %q, want %q", sh, out, want)
		}
	}
}
