package users

import (
	"path/filepath"
	"strings"
)

// ResolvePath turns a path as an SDK user wrote it into a clean absolute path,
// following envd's rules:
//   - "" is the default workdir when one is set, otherwise the user's home;
//   - a leading "~" (alone or followed by "/") is the user's home;
//   - any other relative path is relative to the user's home, not to envd's cwd.
func ResolvePath(p string, u *User, workdir string) string {
	home := u.Home
	if home == "" {
		home = "/"
	}
	switch {
	case p == "":
		if workdir != "" {
			return filepath.Clean(workdir)
		}
		return filepath.Clean(home)
	case p == "~":
		return filepath.Clean(home)
	case strings.HasPrefix(p, "~/"):
		return filepath.Join(home, p[2:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	default:
		return filepath.Join(home, p)
	}
}
