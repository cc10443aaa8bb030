package process

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// fallbackPath is used when envd itself was started without PATH (a bare
// container init), so commands like "bash" still resolve.
const fallbackPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// orderedEnv keeps the first position of each key and the last value, so
// later layers override earlier ones without reordering the result.
type orderedEnv struct {
	keys []string
	vals map[string]string
}

func (e *orderedEnv) set(k, v string) {
	if _, ok := e.vals[k]; !ok {
		e.keys = append(e.keys, k)
	}
	e.vals[k] = v
}

// setAll adds m in sorted key order, so the result is deterministic.
func (e *orderedEnv) setAll(m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		e.set(k, m[k])
	}
}

// buildEnv layers, later winning: envd's PATH; HOME, USER and LOGNAME of the
// user; the sandbox's global env vars from /init; the request's envs.
func buildEnv(u *users.User, global, request map[string]string) []string {
	e := &orderedEnv{vals: map[string]string{}}
	path := os.Getenv("PATH")
	if path == "" {
		path = fallbackPath
	}
	e.set("PATH", path)
	e.set("HOME", u.Home)
	e.set("USER", u.Name)
	e.set("LOGNAME", u.Name)
	e.setAll(global)
	e.setAll(request)
	out := make([]string, 0, len(e.keys))
	for _, k := range e.keys {
		out = append(out, k+"="+e.vals[k])
	}
	return out
}

// lookPath finds cmd the way a shell would for the child: a name with a
// slash is taken as is (relative to cwd), anything else is searched in the
// child's PATH, not envd's.
func lookPath(cmd string, env []string, cwd string) (string, error) {
	if strings.Contains(cmd, "/") {
		if !filepath.IsAbs(cmd) {
			cmd = filepath.Join(cwd, cmd)
		}
		if err := executable(cmd); err != nil {
			return "", errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("cannot execute %q: %v", cmd, err))
		}
		return cmd, nil
	}
	path := fallbackPath
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		candidate := filepath.Join(dir, cmd)
		if executable(candidate) == nil {
			return candidate, nil
		}
	}
	return "", errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("executable file %q not found in $PATH", cmd))
}

func executable(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not an executable file", path)
	}
	return nil
}
