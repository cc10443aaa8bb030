package filesystem_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/api/gen/filesystem/filesystemconnect"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

func newEnv(t *testing.T) (*envdtest.Env, filesystemconnect.FilesystemClient) {
	t.Helper()
	e := envdtest.New(t)
	return e, e.FilesystemClient()
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// xattrsWork reports whether dir's filesystem stores user xattrs.
func xattrsWork(dir string) bool {
	p := filepath.Join(dir, ".xattr-probe")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		return false
	}
	defer os.Remove(p)
	return unix.Setxattr(p, "user.probe", []byte("1"), 0) == nil
}

// statFixture makes a file, a directory and three kinds of symlink.
func statFixture(t *testing.T, e *envdtest.Env) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir+"/a.txt", "hello")
	write(t, e.Home+"/rel.txt", "rel")
	if err := os.Mkdir(dir+"/sub", 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir+"/a.txt", dir+"/link"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("sub", dir+"/dirlink"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir+"/gone", dir+"/broken"); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestStat(t *testing.T) {
	t.Parallel()
	e, c := newEnv(t)
	dir := statFixture(t, e)
	owner := e.Users.Names().User(uint32(os.Geteuid()))
	tests := []struct {
		name, path  string
		wantPath    string
		typ         pb.FileType
		size        int64
		mode        uint32
		permissions string
		target      string
	}{
		{name: "file", path: dir + "/a.txt", typ: pb.FileType_FILE_TYPE_FILE, size: 5, mode: 0o644, permissions: "-rw-r--r--"},
		{name: "relative to home", path: "rel.txt", wantPath: e.Home + "/rel.txt", typ: pb.FileType_FILE_TYPE_FILE, size: 3, mode: 0o644, permissions: "-rw-r--r--"},
		{name: "tilde", path: "~/rel.txt", wantPath: e.Home + "/rel.txt", typ: pb.FileType_FILE_TYPE_FILE, size: 3, mode: 0o644, permissions: "-rw-r--r--"},
		{name: "directory", path: dir + "/sub", typ: pb.FileType_FILE_TYPE_DIRECTORY, mode: 0o750, permissions: "drwxr-x---"},
		{name: "symlink to file", path: dir + "/link", typ: pb.FileType_FILE_TYPE_FILE, mode: 0o644, permissions: "Lrwxrwxrwx", target: dir + "/a.txt"},
		{name: "symlink to dir", path: dir + "/dirlink", typ: pb.FileType_FILE_TYPE_DIRECTORY, mode: 0o750, permissions: "Lrwxrwxrwx", target: dir + "/sub"},
		{name: "broken symlink", path: dir + "/broken", typ: pb.FileType_FILE_TYPE_UNSPECIFIED, permissions: "Lrwxrwxrwx", target: dir + "/gone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := c.Stat(t.Context(), connect.NewRequest(&pb.StatRequest{Path: tt.path}))
			if err != nil {
				t.Fatal(err)
			}
			en := resp.Msg.GetEntry()
			want := tt.wantPath
			if want == "" {
				want = tt.path
			}
			if en.GetPath() != want || en.GetName() != filepath.Base(want) || en.GetType() != tt.typ ||
				en.GetMode() != tt.mode || en.GetPermissions() != tt.permissions || en.GetOwner() != owner {
				t.Errorf("entry = %v", en)
			}
			if tt.size != 0 && en.GetSize() != tt.size {
				t.Errorf("size = %d, want %d", en.GetSize(), tt.size)
			}
			if en.GetSymlinkTarget() != tt.target || (tt.target == "") != (en.SymlinkTarget == nil) {
				t.Errorf("symlink_target = %v, want %q", en.SymlinkTarget, tt.target)
			}
			if en.GetModifiedTime().AsTime().IsZero() {
				t.Error("no modified time")
			}
		})
	}
}

func TestStatMissing(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	_, err := c.Stat(t.Context(), connect.NewRequest(&pb.StatRequest{Path: t.TempDir() + "/nope"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("err = %v, want not_found", err)
	}
}

func TestStatMetadata(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	dir := t.TempDir()
	if !xattrsWork(dir) {
		t.Skip("no user xattrs on this filesystem")
	}
	p := dir + "/md.txt"
	write(t, p, "x")
	if err := unix.Setxattr(p, "user.e2b.owner", []byte("alice"), 0); err != nil {
		t.Fatal(err)
	}
	if err := unix.Setxattr(p, "user.other", []byte("ignored"), 0); err != nil {
		t.Fatal(err)
	}
	resp, err := c.Stat(t.Context(), connect.NewRequest(&pb.StatRequest{Path: p}))
	if err != nil {
		t.Fatal(err)
	}
	if md := resp.Msg.GetEntry().GetMetadata(); len(md) != 1 || md["owner"] != "alice" {
		t.Errorf("metadata = %v", md)
	}
}

func TestMakeDir(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	dir := t.TempDir()
	write(t, dir+"/file", "x")
	tests := []struct {
		name string
		path string
		code connect.Code // 0: success
	}{
		{name: "nested", path: dir + "/a/b/c"},
		{name: "exists", path: dir, code: connect.CodeAlreadyExists},
		{name: "file in the way", path: dir + "/file", code: connect.CodeInvalidArgument},
		{name: "file as parent", path: dir + "/file/sub", code: connect.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := c.MakeDir(t.Context(), connect.NewRequest(&pb.MakeDirRequest{Path: tt.path}))
			if tt.code != 0 {
				if connect.CodeOf(err) != tt.code {
					t.Fatalf("err = %v, want %v", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if en := resp.Msg.GetEntry(); en.GetType() != pb.FileType_FILE_TYPE_DIRECTORY || en.GetPath() != tt.path {
				t.Errorf("entry = %v", en)
			}
		})
	}
}

func TestMakeDirOwnedByUser(t *testing.T) {
	envdtest.RequireRoot(t)
	t.Parallel()
	e := envdtest.New(t)
	c := e.FilesystemClient(envdtest.WithHeader("Authorization", envdtest.BasicUser(envdtest.SBUser)))
	resp, err := c.MakeDir(t.Context(), connect.NewRequest(&pb.MakeDirRequest{Path: "x/y"}))
	if err != nil {
		t.Fatal(err)
	}
	if en := resp.Msg.GetEntry(); en.GetOwner() != envdtest.SBUser || en.GetGroup() != "sbgroup" || en.GetPath() != e.SBHome+"/x/y" {
		t.Errorf("entry = %v", en)
	}
	parent, err := c.Stat(t.Context(), connect.NewRequest(&pb.StatRequest{Path: "x"}))
	if err != nil || parent.Msg.GetEntry().GetOwner() != envdtest.SBUser {
		t.Errorf("created parent: %v %v", parent, err)
	}
}

func TestMove(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	dir := t.TempDir()
	write(t, dir+"/a.txt", "data")
	resp, err := c.Move(t.Context(), connect.NewRequest(&pb.MoveRequest{Source: dir + "/a.txt", Destination: dir + "/new/parent/b.txt"}))
	if err != nil {
		t.Fatal(err)
	}
	if en := resp.Msg.GetEntry(); en.GetPath() != dir+"/new/parent/b.txt" || en.GetSize() != 4 {
		t.Errorf("entry = %v", en)
	}
	if _, err := os.Stat(dir + "/a.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("source still there: %v", err)
	}
	_, err = c.Move(t.Context(), connect.NewRequest(&pb.MoveRequest{Source: dir + "/missing", Destination: dir + "/x"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Errorf("missing source: %v", err)
	}
}

func TestRemove(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	dir := t.TempDir()
	write(t, dir+"/tree/a/b.txt", "x")
	write(t, dir+"/f.txt", "x")
	for _, p := range []string{dir + "/tree", dir + "/f.txt", dir + "/never-existed"} {
		if _, err := c.Remove(t.Context(), connect.NewRequest(&pb.RemoveRequest{Path: p})); err != nil {
			t.Errorf("Remove(%s): %v", p, err)
		}
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists", p)
		}
	}
}

func TestListDir(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	dir := t.TempDir()
	write(t, dir+"/a.txt", "a")
	write(t, dir+"/sub/b.txt", "b")
	write(t, dir+"/sub/deeper/c.txt", "c")
	write(t, dir+"/other/d.txt", "d")
	if err := os.Symlink(dir+"/other", dir+"/sub/link"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir+"/sub", dir+"/rootlink"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		path  string
		depth uint32
		want  []string
	}{
		{name: "depth 0 means 1", path: dir + "/sub", depth: 0, want: []string{"b.txt", "deeper", "link"}},
		{name: "depth 1", path: dir + "/sub", depth: 1, want: []string{"b.txt", "deeper", "link"}},
		{name: "depth 2 does not follow symlinks", path: dir + "/sub", depth: 2, want: []string{"b.txt", "deeper", "deeper/c.txt", "link"}},
		{name: "symlinked root is followed", path: dir + "/rootlink", depth: 1, want: []string{"b.txt", "deeper", "link"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			resp, err := c.ListDir(t.Context(), connect.NewRequest(&pb.ListDirRequest{Path: tt.path, Depth: tt.depth}))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, en := range resp.Msg.GetEntries() {
				rel, _ := filepath.Rel(tt.path, en.GetPath())
				got = append(got, rel)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("entries = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestListDirErrors(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	dir := t.TempDir()
	write(t, dir+"/a.txt", "a")
	errs := []struct {
		name string
		path string
		code connect.Code
	}{
		{"missing", dir + "/nope", connect.CodeNotFound},
		{"not a directory", dir + "/a.txt", connect.CodeInvalidArgument},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := c.ListDir(t.Context(), connect.NewRequest(&pb.ListDirRequest{Path: tt.path}))
			if connect.CodeOf(err) != tt.code {
				t.Errorf("err = %v, want %v", err, tt.code)
			}
		})
	}
}
