package builder

import (
	"bufio"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/overlay"
)

// view is a read-only merged mount of a layer stack on the host, so that
// COPY can see the image as a sandbox would: whiteouts applied and
// symlinks such as /bin -> usr/bin resolved inside the image, never on the
// host.
type view struct {
	root    string
	mounted bool
}

// openView mounts layers (top first) read-only under scratch.
func openView(scratch string, layers []string) (*view, error) {
	if len(layers) == 1 {
		return &view{root: layers[0]}, nil
	}
	dir, err := os.MkdirTemp(scratch, "view-")
	if err != nil {
		return nil, fmt.Errorf("creating view dir: %w", err)
	}
	if err := overlay.Mount(dir, layers, "", "", []string{"index=off", "xino=off"}, unix.MS_RDONLY|unix.MS_NODEV|unix.MS_NOSUID); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("mounting a view of the image: %w", err)
	}
	return &view{root: dir, mounted: true}, nil
}

func (v *view) close() {
	if v.mounted {
		_ = unix.Unmount(v.root, unix.MNT_DETACH)
		_ = os.Remove(v.root)
	}
}

// resolve returns p (absolute inside the image) with every symlink
// resolved inside the image, as the sandbox would see it, dangling ones
// included (a COPY to a dangling link's path creates its target). It walks
// one component at a time: the prefix walked so far never holds a symlink,
// so each Lstat on the host stays inside the view.
func (v *view) resolve(p string) (string, error) {
	parts := strings.Split(path.Clean("/"+p), "/")
	cur, hops := "/", 0
	for len(parts) > 0 {
		part := parts[0]
		parts = parts[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, part)
		fi, err := os.Lstat(filepath.Join(v.root, next))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("too many levels of symbolic links in %s", p)
		}
		target, err := os.Readlink(filepath.Join(v.root, next))
		if err != nil {
			return "", err
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		parts = append(strings.Split(target, "/"), parts...)
	}
	return cur, nil
}

// resolveExisting resolves rel (relative to the image root) with openat2's
// RESOLVE_IN_ROOT, which treats the view as "/" for every symlink.
func (v *view) resolveExisting(rel string) (string, error) {
	rootFd, err := unix.Open(v.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("opening view: %w", err)
	}
	defer unix.Close(rootFd)
	fd, err := unix.Openat2(rootFd, rel, &unix.OpenHow{
		Flags:   unix.O_PATH | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS,
	})
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil {
		return "", err
	}
	root, err := filepath.EvalSymlinks(v.root)
	if err != nil {
		return "", err
	}
	if real != root && !strings.HasPrefix(real, root+"/") {
		return "", fmt.Errorf("path %q resolved outside the image", rel)
	}
	return "/" + strings.TrimPrefix(strings.TrimPrefix(real, root), "/"), nil
}

// stat returns the file info of p inside the image (symlinks resolved
// inside it), or an error wrapping os.ErrNotExist.
func (v *view) stat(p string) (os.FileInfo, error) {
	real, err := v.resolveExisting(strings.TrimPrefix(path.Clean("/"+p), "/"))
	if err != nil {
		return nil, &os.PathError{Op: "stat", Path: p, Err: err}
	}
	return os.Lstat(filepath.Join(v.root, real))
}

// readFile reads a small file of the image (/etc/passwd).
func (v *view) readFile(p string) ([]byte, error) {
	real, err := v.resolveExisting(strings.TrimPrefix(path.Clean("/"+p), "/"))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: p, Err: err}
	}
	return os.ReadFile(filepath.Join(v.root, real))
}

// ids resolves "user", "user:group", "uid" or "uid:gid" with the image's
// /etc/passwd and /etc/group.
func (v *view) ids(spec string) (uid, gid int, err error) {
	userPart, groupPart, hasGroup := strings.Cut(spec, ":")
	uid, gid, err = v.lookupUser(userPart)
	if err != nil {
		return 0, 0, err
	}
	if hasGroup {
		if gid, err = v.lookupGroup(groupPart); err != nil {
			return 0, 0, err
		}
	}
	return uid, gid, nil
}

func (v *view) lookupUser(name string) (int, int, error) {
	if n, err := strconv.Atoi(name); err == nil {
		gid := n
		if _, g, err := v.findEntry("/etc/passwd", func(f []string) bool { return f[2] == name }); err == nil {
			gid = g
		}
		return n, gid, nil
	}
	uid, gid, err := v.findEntry("/etc/passwd", func(f []string) bool { return f[0] == name })
	if err != nil {
		return 0, 0, fmt.Errorf("user %q: %w", name, err)
	}
	return uid, gid, nil
}

func (v *view) lookupGroup(name string) (int, error) {
	if n, err := strconv.Atoi(name); err == nil {
		return n, nil
	}
	gid, _, err := v.findEntry("/etc/group", func(f []string) bool { return f[0] == name })
	if err != nil {
		return 0, fmt.Errorf("group %q: %w", name, err)
	}
	return gid, nil
}

// findEntry scans a passwd-style file and returns fields 2 and 3 (uid and
// gid for passwd; gid and members' first number for group) of the first
// line match accepts.
func (v *view) findEntry(file string, match func([]string) bool) (int, int, error) {
	data, err := v.readFile(file)
	if err != nil {
		return 0, 0, fmt.Errorf("the image has no %s", file)
	}
	sc := bufio.NewScanner(strings.NewReader(string(data)))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 3 || !match(f) {
			continue
		}
		a, _ := strconv.Atoi(f[2])
		b := a
		if len(f) > 3 {
			if n, err := strconv.Atoi(f[3]); err == nil {
				b = n
			}
		}
		return a, b, nil
	}
	return 0, 0, fmt.Errorf("not found in the image's %s", file)
}
