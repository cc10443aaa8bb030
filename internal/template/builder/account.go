package builder

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ensureAccount adds the `user` account (uid 1000 where free) and its home
// when the image lacks them, as E2B does: envd runs commands as `user` by
// default. The change is a small cached layer of its own.
func (b *Builder) ensureAccount(ctx context.Context, st *fsState) (*fsState, error) {
	v, err := openView(b.opts.WorkDir, st.layers)
	if err != nil {
		return nil, err
	}
	passwd, perr := v.readFile("/etc/passwd")
	group, _ := v.readFile("/etc/group")
	shadow, serr := v.readFile("/etc/shadow")
	_, homeErr := v.stat("/home/user")
	shell := "/bin/sh"
	if fi, err := v.stat("/bin/bash"); err == nil && fi.Mode().IsRegular() {
		shell = "/bin/bash"
	}
	etcInfo, etcErr := v.stat("/etc")
	v.close()
	if perr == nil && hasEntry(passwd, "user") && homeErr == nil {
		return st, nil
	}
	if etcErr != nil || !etcInfo.IsDir() {
		return nil, errors.New("the image has no /etc directory; warren needs one for the `user` account")
	}
	next := st.clone()
	out, _, err := b.layerStep(ctx, next, chain(st.key, "account-v1"), false, func(dir string) error {
		uid := freeID(passwd, 1000)
		gid := freeID(group, uid)
		files := map[string][]byte{}
		if !hasEntry(passwd, "user") {
			files["passwd"] = appendLine(passwd, fmt.Sprintf("user:x:%d:%d::/home/user:%s", uid, gid, shell))
			if !hasEntry(group, "user") {
				files["group"] = appendLine(group, fmt.Sprintf("user:x:%d:", gid))
			}
			if serr == nil && !hasEntry(shadow, "user") {
				files["shadow"] = appendLine(shadow, "user:!:19000:0:99999:7:::")
			}
		} else {
			uid, gid, _ = findIDs(passwd, "user")
		}
		return writeAccount(dir, etcInfo, files, uid, gid)
	})
	return out, err
}

// writeAccount writes the changed account files into the layer with /etc's
// own metadata, and /home/user owned by the account.
func writeAccount(dir string, etcInfo os.FileInfo, files map[string][]byte, uid, gid int) error {
	if len(files) > 0 {
		etc := filepath.Join(dir, "etc")
		if err := mkdirLike(etc, etcInfo); err != nil {
			return err
		}
		for name, data := range files {
			mode := os.FileMode(0o644)
			if name == "shadow" {
				mode = 0o640
			}
			if err := os.WriteFile(filepath.Join(etc, name), data, mode); err != nil {
				return fmt.Errorf("writing /etc/%s: %w", name, err)
			}
		}
	}
	home := filepath.Join(dir, "home", "user")
	if err := os.MkdirAll(home, 0o755); err != nil {
		return fmt.Errorf("creating /home/user: %w", err)
	}
	if err := os.Chmod(home, 0o750); err != nil {
		return err
	}
	return os.Lchown(home, uid, gid)
}

// mkdirLike creates dir with the mode and owner of an existing directory.
func mkdirLike(dir string, fi os.FileInfo) error {
	if err := os.Mkdir(dir, fi.Mode().Perm()); err != nil && !os.IsExist(err) {
		return fmt.Errorf("creating %s: %w", dir, err)
	}
	if err := os.Chmod(dir, fi.Mode()&(os.ModePerm|os.ModeSticky|os.ModeSetgid|os.ModeSetuid)); err != nil {
		return err
	}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		return os.Lchown(dir, int(sys.Uid), int(sys.Gid))
	}
	return nil
}

func hasEntry(file []byte, name string) bool {
	for line := range strings.SplitSeq(string(file), "\n") {
		if strings.HasPrefix(line, name+":") {
			return true
		}
	}
	return false
}

func findIDs(file []byte, name string) (int, int, bool) {
	for line := range strings.SplitSeq(string(file), "\n") {
		f := strings.Split(line, ":")
		if len(f) > 3 && f[0] == name {
			u, _ := strconv.Atoi(f[2])
			g, _ := strconv.Atoi(f[3])
			return u, g, true
		}
	}
	return 0, 0, false
}

// freeID is the first id from want up that no line of a passwd or group
// file uses.
func freeID(file []byte, want int) int {
	used := map[int]bool{}
	for line := range strings.SplitSeq(string(file), "\n") {
		if f := strings.Split(line, ":"); len(f) > 2 {
			if n, err := strconv.Atoi(f[2]); err == nil {
				used[n] = true
			}
		}
	}
	for used[want] {
		want++
	}
	return want
}

func appendLine(file []byte, line string) []byte {
	s := string(file)
	if s != "" && !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return []byte(s + line + "\n")
}

// makeWorkdir creates a WORKDIR that the image lacks, owned by the
// current user (as BuildKit does), in the layer dir.
func (b *Builder) makeWorkdir(st *fsState, wd, dir string) error {
	v, err := openView(b.opts.WorkDir, st.layers)
	if err != nil {
		return err
	}
	defer v.close()
	if fi, err := v.stat(wd); err == nil && fi.IsDir() {
		return nil
	}
	uid, gid, err := v.ids(st.userOrRoot())
	if err != nil {
		return err
	}
	real, err := v.resolve(wd)
	if err != nil {
		return err
	}
	return mkdirs(v, dir, real, uid, gid)
}

func (s *fsState) userOrRoot() string {
	if s.user == "" {
		return "root"
	}
	return s.user
}

// mkdirs creates the in-image directory p (symlinks already resolved) in
// the layer dir: components the image has keep their metadata, new ones
// get mode 0755 and uid:gid.
func mkdirs(v *view, dir, p string, uid, gid int) error {
	cur := "/"
	for _, part := range strings.Split(strings.Trim(path.Clean(p), "/"), "/") {
		if part == "" {
			continue
		}
		cur = path.Join(cur, part)
		target := filepath.Join(dir, cur)
		if fi, err := os.Lstat(target); err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s is not a directory", cur)
			}
			continue
		}
		if fi, err := v.stat(cur); err == nil {
			if !fi.IsDir() {
				return fmt.Errorf("%s exists in the image and is not a directory", cur)
			}
			if err := mkdirLike(target, fi); err != nil {
				return err
			}
			continue
		}
		if err := os.Mkdir(target, 0o755); err != nil {
			return fmt.Errorf("creating %s: %w", cur, err)
		}
		if err := os.Lchown(target, uid, gid); err != nil {
			return err
		}
	}
	return nil
}
