package volume

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// me are Attrs owned by the test's own user, so the tests run without
// root (a new file's default owner is root).
func me() Attrs {
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	return Attrs{UID: &uid, GID: &gid}
}

func u32(v uint32) *uint32 { return &v }

// newTree makes a volume root beside a directory "outside" holding a
// secret, with symlinks that try to lead out of the root.
func newTree(t *testing.T) (*content, string) {
	t.Helper()
	base := t.TempDir()
	root, outside := filepath.Join(base, "data"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside, filepath.Join(root, "dir", "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(outside, "secret"):         "host secret",
		filepath.Join(root, "a.txt"):             "hello",
		filepath.Join(root, "dir", "b.txt"):      "bee",
		filepath.Join(root, "dir", "sub", "c.t"): "sea",
	}
	for p, s := range files {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"etc":      "/etc",              // absolute, to the host's
		"abs":      "/a.txt",            // absolute, meant inside
		"up":       "../outside/secret", // relative, leading out
		"updir":    "../outside",        // a directory out, as a parent
		"in":       "dir/b.txt",         // inside: fine
		"dir/back": "../a.txt",          // inside through ..: fine
		"loop":     "loop",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A FIFO a sandbox left: reading it must not hang the content API.
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := openContent(root)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, outside
}

func read(c *content, p string) (string, error) {
	r, _, err := c.open(p)
	if err != nil {
		return "", err
	}
	defer r.Close()
	b, err := io.ReadAll(r)
	return string(b), err
}

func TestContentEscapes(t *testing.T) {
	c, outside := newTree(t)
	cases := []struct {
		name, path string
		op         func(c *content, p string) error
	}{
		{"read via symlink to /etc", "/etc/passwd", readOp},
		{"read via dotdot", "../outside/secret", readOp},
		{"read via absolute dotdot", "/../outside/secret", readOp},
		{"read via dotdot deep", "dir/../../outside/secret", readOp},
		{"read via relative symlink out", "/up", readOp},
		{"read via absolute symlink", "/abs", readOp},
		{"read via symlinked parent", "/updir/secret", readOp},
		{"list via symlinked parent", "/updir", listOp},
		{"list via dotdot", "..", listOp},
		{"stat via symlinked parent", "/updir/secret", statOp},
		{"write via symlinked parent", "/updir/planted", writeOp},
		{"write via dotdot", "../planted", writeOp},
		{"mkdir via symlinked parent", "/updir/newdir", mkdirOp},
		{"mkdir -p via symlinked parent", "/updir/x/y", mkdirForceOp},
		{"remove via symlinked parent", "/updir/secret", removeOp},
		{"chmod via symlink out", "/updir/secret/..", chmodOp},
		{"symlink loop", "/loop", readOp},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.op(c, tc.path)
			if err == nil {
				t.Fatalf("%s %q: no error", tc.name, tc.path)
			}
			if !errors.Is(err, errdefs.ErrInvalidArgument) && !errors.Is(err, errdefs.ErrNotFound) {
				t.Fatalf("%s %q: %v, want invalid argument or not found", tc.name, tc.path, err)
			}
			if strings.Contains(err.Error(), outside) {
				t.Fatalf("the error names a host path: %v", err)
			}
		})
	}
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 1 {
		t.Fatalf("outside the volume now holds %v (%v), want only the secret", entries, err)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "host secret" {
		t.Fatalf("the secret outside changed: %q", b)
	}
}

func readOp(c *content, p string) error {
	s, err := read(c, p)
	if err == nil && s == "host secret" {
		return errors.New("read the host's secret")
	}
	return err
}
func listOp(c *content, p string) error { _, err := c.list(p, 2); return err }
func statOp(c *content, p string) error { _, err := c.stat(p); return err }
func writeOp(c *content, p string) error {
	_, err := c.write(p, strings.NewReader("x"), me(), true, -1)
	return err
}
func mkdirOp(c *content, p string) error      { _, err := c.mkdir(p, me(), false); return err }
func mkdirForceOp(c *content, p string) error { _, err := c.mkdir(p, me(), true); return err }
func removeOp(c *content, p string) error     { return c.remove(p) }
func chmodOp(c *content, p string) error {
	_, err := c.setAttrs(p, Attrs{Mode: u32(0o777)})
	return err
}

func TestContentInsideLinks(t *testing.T) {
	c, _ := newTree(t)
	for p, want := range map[string]string{"/in": "bee", "/dir/back": "hello", "dir/./../a.txt": "hello"} {
		if got, err := read(c, p); err != nil || got != want {
			t.Errorf("read %s = %q, %v; want %q", p, got, err, want)
		}
	}
	e, err := c.stat("/etc")
	if err != nil || e.Type != TypeSymlink || e.Target != "/etc" {
		t.Errorf("stat /etc = %+v, %v; want a symlink to /etc, described not followed", e, err)
	}
}

func TestCleanPath(t *testing.T) {
	cases := []struct {
		in, rel, abs string
		bad          bool
	}{
		{in: "/", rel: ".", abs: "/"},
		{in: "a/b/", rel: "a/b", abs: "/a/b"},
		{in: "//a//b", rel: "a/b", abs: "/a/b"},
		{in: "/a/../b", rel: "b", abs: "/b"},
		{in: "", bad: true},
		{in: "..", bad: true},
		{in: "/a/../../b", bad: true},
		{in: "a\x00b", bad: true},
		{in: "/" + strings.Repeat("a", maxPath), bad: true},
	}
	for _, tc := range cases {
		rel, abs, err := cleanPath(tc.in)
		if tc.bad {
			if !errors.Is(err, errdefs.ErrInvalidArgument) {
				t.Errorf("cleanPath(%q) = %q, %v; want invalid argument", tc.in, rel, err)
			}
			continue
		}
		if err != nil || rel != tc.rel || abs != tc.abs {
			t.Errorf("cleanPath(%q) = %q, %q, %v; want %q, %q", tc.in, rel, abs, err, tc.rel, tc.abs)
		}
	}
}

func TestContentOps(t *testing.T) {
	cases := []struct {
		name string
		op   func(c *content) error
		want error // nil: success
	}{
		{"mkdir", func(c *content) error { return errOf(c.mkdir("/new", me(), false)) }, nil},
		{"mkdir existing dir", func(c *content) error { return errOf(c.mkdir("/dir", me(), false)) }, errdefs.ErrAlreadyExists},
		{"mkdir existing dir force", func(c *content) error { return errOf(c.mkdir("/dir", me(), true)) }, nil},
		{"mkdir existing file force", func(c *content) error { return errOf(c.mkdir("/a.txt", me(), true)) }, errdefs.ErrConflict},
		{"mkdir missing parent", func(c *content) error { return errOf(c.mkdir("/x/y", me(), false)) }, errdefs.ErrNotFound},
		{"mkdir parent is file", func(c *content) error { return errOf(c.mkdir("/a.txt/y", me(), false)) }, errdefs.ErrConflict},
		{"mkdir parents", func(c *content) error { return errOf(c.mkdir("/x/y/z", me(), true)) }, nil},
		{"mkdir root", func(c *content) error { return errOf(c.mkdir("/", me(), false)) }, errdefs.ErrAlreadyExists},
		{"mkdir bad mode", func(c *content) error {
			a := me()
			a.Mode = u32(0o10000)
			return errOf(c.mkdir("/m", a, false))
		}, errdefs.ErrInvalidArgument},
		{"write new", func(c *content) error { return writeS(c, "/n.txt", false) }, nil},
		{"write existing", func(c *content) error { return writeS(c, "/a.txt", false) }, errdefs.ErrAlreadyExists},
		{"write existing force", func(c *content) error { return writeS(c, "/a.txt", true) }, nil},
		{"write over dir", func(c *content) error { return writeS(c, "/dir", true) }, errdefs.ErrConflict},
		{"write missing parent", func(c *content) error { return writeS(c, "/nope/f", true) }, errdefs.ErrNotFound},
		{"write root", func(c *content) error { return writeS(c, "/", true) }, errdefs.ErrConflict},
		{"write past limit", func(c *content) error {
			_, err := c.write("/big", strings.NewReader("12345"), me(), false, 4)
			return err
		}, errdefs.ErrNoSpace},
		{"read dir", func(c *content) error { _, err := read(c, "/dir"); return err }, errdefs.ErrInvalidArgument},
		{"read fifo", func(c *content) error { _, err := read(c, "/fifo"); return err }, errdefs.ErrInvalidArgument},
		{"read missing", func(c *content) error { _, err := read(c, "/none"); return err }, errdefs.ErrNotFound},
		{"stat missing", func(c *content) error { return errOf(c.stat("/none")) }, errdefs.ErrNotFound},
		{"list file", func(c *content) error { _, err := c.list("/a.txt", 1); return err }, errdefs.ErrNotFound},
		{"list missing", func(c *content) error { _, err := c.list("/none", 1); return err }, errdefs.ErrNotFound},
		{"remove root", func(c *content) error { return c.remove("/") }, errdefs.ErrInvalidArgument},
		{"remove missing", func(c *content) error { return c.remove("/none") }, errdefs.ErrNotFound},
		{"remove tree", func(c *content) error { return c.remove("/dir") }, nil},
		{"remove symlink out", func(c *content) error { return c.remove("/updir") }, nil},
		{"chmod symlink", func(c *content) error { return errOf(c.setAttrs("/in", Attrs{Mode: u32(0o600)})) }, errdefs.ErrInvalidArgument},
		{"set attrs missing", func(c *content) error { return errOf(c.setAttrs("/none", Attrs{Mode: u32(0o600)})) }, errdefs.ErrNotFound},
		{"empty path", func(c *content) error { return errOf(c.stat("")) }, errdefs.ErrInvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, outside := newTree(t)
			err := tc.op(c)
			if (tc.want == nil) != (err == nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			if _, serr := os.Stat(filepath.Join(outside, "secret")); serr != nil {
				t.Fatalf("the file outside is gone: %v", serr)
			}
		})
	}
}

func errOf(_ Entry, err error) error { return err }

func writeS(c *content, p string, force bool) error {
	_, err := c.write(p, strings.NewReader("new"), me(), force, -1)
	return err
}

func TestContentSemantics(t *testing.T) {
	c, _ := newTree(t)
	a := me()
	a.Mode = u32(0o640)
	e, err := c.write("/dir/w.txt", bytes.NewReader([]byte("written")), a, false, 7)
	if err != nil {
		t.Fatal(err)
	}
	if e.Type != TypeFile || e.Size != 7 || e.Mode != 0o640 || e.Path != "/dir/w.txt" || e.Name != "w.txt" || e.MTime.IsZero() {
		t.Fatalf("write entry = %+v", e)
	}
	if got, _ := read(c, "dir/w.txt"); got != "written" {
		t.Fatalf("read back %q", got)
	}
	if d, _ := os.ReadDir(filepath.Join(c.root.Name(), "dir")); len(d) != 4 {
		t.Fatalf("dir holds %d entries, want 4 (no temporary file left)", len(d))
	}
	d, err := c.mkdir("/p/q", me(), true)
	if err != nil || d.Type != TypeDirectory || d.Mode != 0o755 {
		t.Fatalf("mkdir -p = %+v, %v", d, err)
	}
	s, err := c.setAttrs("/a.txt", Attrs{Mode: u32(0o4711)})
	if err != nil || s.Mode != 0o4711 {
		t.Fatalf("set mode = %+v, %v", s, err)
	}
	one, err := c.list("/", 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(one); got != "/a.txt /abs /dir /etc /fifo /in /loop /p /up /updir" {
		t.Fatalf("list depth 1 = %s", got)
	}
	two, err := c.list("/dir", 2)
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(two); got != "/dir/b.txt /dir/back /dir/sub /dir/sub/c.t /dir/w.txt" {
		t.Fatalf("list /dir depth 2 = %s", got)
	}
	deep, _ := c.list("/", 5)
	for _, e := range deep {
		if strings.HasPrefix(e.Path, "/etc/") || strings.HasPrefix(e.Path, "/updir/") {
			t.Fatalf("a deep list entered symlinked directory: %s", e.Path)
		}
	}
}

func paths(es []Entry) string {
	var ps []string
	for _, e := range es {
		ps = append(ps, e.Path)
	}
	return strings.Join(ps, " ")
}

// TestWriteAtomic: a reader racing forced rewrites sees one whole
// version of the file, never a mix or a short one.
func TestWriteAtomic(t *testing.T) {
	c, _ := newTree(t)
	const n = 256 << 10
	versions := []string{strings.Repeat("A", n), strings.Repeat("B", n)}
	if _, err := c.write("/f", strings.NewReader(versions[0]), me(), false, -1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() {
		for i := range 40 {
			if _, err := c.write("/f", strings.NewReader(versions[i%2]), me(), true, -1); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			return
		default:
		}
		got, err := read(c, "/f")
		if err != nil {
			t.Fatal(err)
		}
		if got != versions[0] && got != versions[1] {
			t.Fatalf("a reader saw %d bytes starting %q: not one whole version", len(got), got[:min(len(got), 8)])
		}
	}
}

// TestRemoveFreesOpenFiles: a file something still holds open (as
// gVisor's dentry cache does for a sandbox's files) is emptied by a
// remove, so its space comes back; a hard link's data and a file outside
// behind a symlink are left whole.
func TestRemoveFreesOpenFiles(t *testing.T) {
	c, outside := newTree(t)
	root := filepath.Join(filepath.Dir(outside), "data")
	held, err := os.Open(filepath.Join(root, "dir", "sub", "c.t"))
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	if err := os.Link(filepath.Join(root, "dir", "b.txt"), filepath.Join(root, "b-link")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/dir", "/updir", "/up"} {
		if err := c.remove(p); err != nil {
			t.Fatalf("remove %s: %v", p, err)
		}
	}
	if st, err := held.Stat(); err != nil || st.Size() != 0 {
		t.Errorf("a removed file held open: size %v, %v; want 0 (its blocks freed)", st.Size(), err)
	}
	for p, want := range map[string]string{
		filepath.Join(root, "b-link"):    "bee",
		filepath.Join(outside, "secret"): "host secret",
	} {
		if got, err := os.ReadFile(p); err != nil || string(got) != want {
			t.Errorf("%s after the removes: %q, %v; want %q", p, got, err, want)
		}
	}
}
