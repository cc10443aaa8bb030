// Package users resolves sandbox users and groups by parsing /etc/passwd and
// /etc/group directly.
//
// envd is a static binary (CGO_ENABLED=0), so os/user would fall back to its
// own partial parser anyway; parsing the files here keeps lookups explicit,
// picks up users added at runtime (useradd inside the sandbox), and lets tests
// point the lookups at files of their own.
package users

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Default locations of the account databases.
const (
	DefaultPasswdPath = "/etc/passwd"
	DefaultGroupPath  = "/etc/group"
)

// User is one account from the passwd database, with its supplementary groups.
type User struct {
	Name  string
	UID   uint32
	GID   uint32
	Home  string
	Shell string
	// Groups holds the primary gid first, then every group listing the user.
	Groups []uint32
}

// DB reads the account databases. The zero value reads the system files.
type DB struct {
	PasswdPath string
	GroupPath  string
}

func (db DB) passwdPath() string {
	if db.PasswdPath != "" {
		return db.PasswdPath
	}
	return DefaultPasswdPath
}

func (db DB) groupPath() string {
	if db.GroupPath != "" {
		return db.GroupPath
	}
	return DefaultGroupPath
}

// Lookup returns the user called name. An unknown name is errdefs.ErrNotFound.
func (db DB) Lookup(name string) (*User, error) {
	if name == "" {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, "empty username")
	}
	var found *User
	err := scan(db.passwdPath(), 7, func(f []string) bool {
		if f[0] != name {
			return true
		}
		uid, err1 := strconv.ParseUint(f[2], 10, 32)
		gid, err2 := strconv.ParseUint(f[3], 10, 32)
		if err1 != nil || err2 != nil {
			return true // a malformed line cannot be used; keep looking
		}
		found = &User{Name: name, UID: uint32(uid), GID: uint32(gid), Home: f[5], Shell: f[6]}
		return false
	})
	if err != nil {
		return nil, fmt.Errorf("looking up user %q: %w", name, err)
	}
	if found == nil {
		return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("user %q not found", name))
	}
	groups, err := db.groupsOf(found.Name, found.GID)
	if err != nil {
		return nil, fmt.Errorf("looking up groups of %q: %w", name, err)
	}
	found.Groups = groups
	return found, nil
}

// groupsOf lists primary then supplementary gids of the user, without repeats.
func (db DB) groupsOf(name string, primary uint32) ([]uint32, error) {
	groups := []uint32{primary}
	err := scan(db.groupPath(), 4, func(f []string) bool {
		gid, err := strconv.ParseUint(f[2], 10, 32)
		if err != nil || uint32(gid) == primary {
			return true
		}
		for _, member := range strings.Split(f[3], ",") {
			if strings.TrimSpace(member) == name {
				groups = append(groups, uint32(gid))
				break
			}
		}
		return true
	})
	if errors.Is(err, os.ErrNotExist) {
		// A rootfs without /etc/group still has working users.
		return groups, nil
	}
	return groups, err
}

// Names maps numeric ids to names, for showing file owners.
type Names struct {
	users  map[uint32]string
	groups map[uint32]string
}

// Names snapshots the id→name maps. Missing databases give empty maps, so
// owners then show as numbers, which is what ls does too.
func (db DB) Names() *Names {
	n := &Names{users: map[uint32]string{}, groups: map[uint32]string{}}
	_ = scan(db.passwdPath(), 3, func(f []string) bool {
		if id, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			if _, dup := n.users[uint32(id)]; !dup {
				n.users[uint32(id)] = f[0]
			}
		}
		return true
	})
	_ = scan(db.groupPath(), 3, func(f []string) bool {
		if id, err := strconv.ParseUint(f[2], 10, 32); err == nil {
			if _, dup := n.groups[uint32(id)]; !dup {
				n.groups[uint32(id)] = f[0]
			}
		}
		return true
	})
	return n
}

// User returns the name of uid, or the number as a string when unknown.
func (n *Names) User(uid uint32) string {
	if name, ok := n.users[uid]; ok {
		return name
	}
	return strconv.FormatUint(uint64(uid), 10)
}

// Group returns the name of gid, or the number as a string when unknown.
func (n *Names) Group(gid uint32) string {
	if name, ok := n.groups[gid]; ok {
		return name
	}
	return strconv.FormatUint(uint64(gid), 10)
}

// scan calls fn with the colon-separated fields of each usable line of path
// until fn returns false. Lines with fewer than minFields fields, comments and
// NIS compat entries (+/-) are skipped.
func scan(path string, minFields int, fn func(fields []string) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, err)
	}
	defer f.Close()
	return scanReader(f, minFields, fn)
}

func scanReader(r io.Reader, minFields int, fn func(fields []string) bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == '+' || line[0] == '-' {
			continue
		}
		fields := strings.Split(line, ":")
		if len(fields) < minFields {
			continue
		}
		if !fn(fields) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading account database: %w", err)
	}
	return nil
}
