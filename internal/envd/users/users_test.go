package users

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

const testPasswd = `# comment
root:x:0:0:root:/root:/bin/bash
user:x:1000:1000::/home/user:/bin/bash
broken:x:notanumber:1::/x:/bin/sh
+nis
short:x
`

const testGroup = `root:x:0:
user:x:1000:
docker:x:999:user,other
wheel:x:10: other , user
`

func writeDB(t *testing.T) DB {
	t.Helper()
	dir := t.TempDir()
	db := DB{PasswdPath: filepath.Join(dir, "passwd"), GroupPath: filepath.Join(dir, "group")}
	if err := os.WriteFile(db.PasswdPath, []byte(testPasswd), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db.GroupPath, []byte(testGroup), 0o644); err != nil {
		t.Fatal(err)
	}
	return db
}

func TestLookup(t *testing.T) {
	t.Parallel()
	db := writeDB(t)
	tests := []struct {
		name     string
		user     string
		wantUID  uint32
		wantHome string
		groups   []uint32
		wantErr  error
	}{
		{name: "root", user: "root", wantUID: 0, wantHome: "/root", groups: []uint32{0}},
		{name: "supplementary groups", user: "user", wantUID: 1000, wantHome: "/home/user", groups: []uint32{1000, 999, 10}},
		{name: "unknown", user: "nobody-here", wantErr: errdefs.ErrNotFound},
		{name: "malformed uid", user: "broken", wantErr: errdefs.ErrNotFound},
		{name: "empty", user: "", wantErr: errdefs.ErrInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u, err := db.Lookup(tt.user)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Lookup(%q) error = %v, want class %v", tt.user, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup(%q): %v", tt.user, err)
			}
			if u.UID != tt.wantUID || u.Home != tt.wantHome || !slices.Equal(u.Groups, tt.groups) {
				t.Errorf("Lookup(%q) = %+v", tt.user, u)
			}
		})
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	n := writeDB(t).Names()
	if got := n.User(1000); got != "user" {
		t.Errorf("User(1000) = %q", got)
	}
	if got := n.User(4242); got != "4242" {
		t.Errorf("User(4242) = %q", got)
	}
	if got := n.Group(999); got != "docker" {
		t.Errorf("Group(999) = %q", got)
	}
	if got := n.Group(4242); got != "4242" {
		t.Errorf("Group(4242) = %q", got)
	}
}

func TestResolvePath(t *testing.T) {
	t.Parallel()
	u := &User{Name: "user", Home: "/home/user"}
	tests := []struct {
		name, in, workdir, want string
	}{
		{"empty uses workdir", "", "/work", "/work"},
		{"empty without workdir is home", "", "", "/home/user"},
		{"tilde", "~", "", "/home/user"},
		{"tilde slash", "~/a/b.txt", "/work", "/home/user/a/b.txt"},
		{"relative to home", "a.txt", "/work", "/home/user/a.txt"},
		{"absolute cleaned", "/tmp/../etc//x", "", "/etc/x"},
		{"relative escaping home", "../other", "", "/home/other"},
		{"tilde user is relative", "~other", "", "/home/user/~other"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ResolvePath(tt.in, u, tt.workdir); got != tt.want {
				t.Errorf("ResolvePath(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
