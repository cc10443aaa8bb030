package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
)

// watchOptions are the fields shared by WatchDirRequest and CreateWatcherRequest.
type watchOptions struct {
	path               string
	recursive          bool
	includeEntry       bool
	allowNetworkMounts bool
}

// watcher turns fsnotify events under root into FilesystemEvents.
type watcher struct {
	fsw   *fsnotify.Watcher
	root  string
	opts  watchOptions
	names *users.Names
}

// newWatcher validates root and starts watching it (and, when recursive,
// every directory below it, without following symlinks).
func newWatcher(ctx context.Context, root string, opts watchOptions, names *users.Names) (*watcher, error) {
	fi, err := os.Stat(root)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("path '%s' does not exist", root))
		}
		return nil, fmt.Errorf("stat %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path '%s' is not a directory", root))
	}
	if !opts.allowNetworkMounts && onNetworkMount(root) {
		return nil, errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path '%s' is on a network mount; set allow_network_mounts to watch it", root))
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("creating watcher: %w", err)
	}
	w := &watcher{fsw: fsw, root: root, opts: opts, names: names}
	if err := w.add(ctx, root); err != nil {
		_ = fsw.Close()
		return nil, err
	}
	return w, nil
}

// add watches dir, and its subdirectories when recursive.
func (w *watcher) add(ctx context.Context, dir string) error {
	if !w.opts.recursive {
		if err := w.fsw.Add(dir); err != nil {
			return fmt.Errorf("watching %s: %w", dir, err)
		}
		return nil
	}
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return fmt.Errorf("watching %s: %w", dir, err)
			}
			return nil
		}
		if !d.IsDir() {
			return nil
		}
		if err := w.fsw.Add(p); err != nil {
			if p == dir {
				return fmt.Errorf("watching %s: %w", dir, err)
			}
			log.G(ctx).Debug("cannot watch subdirectory", "path", p, "err", err)
		}
		return nil
	})
}

func (w *watcher) close() { _ = w.fsw.Close() }

// opOrder is the order several ops of one fsnotify event are emitted in.
var opOrder = []struct {
	op fsnotify.Op
	t  pb.EventType
}{
	{fsnotify.Create, pb.EventType_EVENT_TYPE_CREATE},
	{fsnotify.Rename, pb.EventType_EVENT_TYPE_RENAME},
	{fsnotify.Chmod, pb.EventType_EVENT_TYPE_CHMOD},
	{fsnotify.Write, pb.EventType_EVENT_TYPE_WRITE},
	{fsnotify.Remove, pb.EventType_EVENT_TYPE_REMOVE},
}

// convert maps one fsnotify event to wire events, one per op. A directory
// created under a recursive watch is watched from then on.
func (w *watcher) convert(ctx context.Context, ev fsnotify.Event) []*pb.FilesystemEvent {
	rel, err := filepath.Rel(w.root, ev.Name)
	if err != nil {
		rel = ev.Name
	}
	var out []*pb.FilesystemEvent
	for _, o := range opOrder {
		if !ev.Has(o.op) {
			continue
		}
		fe := &pb.FilesystemEvent{Name: rel, Type: o.t}
		if w.opts.includeEntry && (o.t == pb.EventType_EVENT_TYPE_CREATE || o.t == pb.EventType_EVENT_TYPE_WRITE || o.t == pb.EventType_EVENT_TYPE_CHMOD) {
			if e, err := Entry(ev.Name, w.names); err == nil {
				fe.Entry = e
			}
		}
		out = append(out, fe)
	}
	if w.opts.recursive && ev.Has(fsnotify.Create) {
		out = append(out, w.adopt(ctx, ev.Name)...)
	}
	return out
}

// maxAdopted bounds the synthetic events for one new directory tree.
const maxAdopted = 10000

// adopt starts watching a directory created under a recursive watch. Entries
// made inside it before the watch was in place would otherwise go unseen
// (mkdir -p a/b && touch a/b/f), so each gets a synthetic create event; a
// client may therefore see a create twice, but never miss one.
func (w *watcher) adopt(ctx context.Context, dir string) []*pb.FilesystemEvent {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return nil
	}
	if err := w.add(ctx, dir); err != nil {
		log.G(ctx).Debug("cannot watch new directory", "path", dir, "err", err)
	}
	var out []*pb.FilesystemEvent
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		if len(out) >= maxAdopted {
			return fs.SkipAll
		}
		rel, _ := filepath.Rel(w.root, p)
		fe := &pb.FilesystemEvent{Name: rel, Type: pb.EventType_EVENT_TYPE_CREATE}
		if w.opts.includeEntry {
			if e, err := Entry(p, w.names); err == nil {
				fe.Entry = e
			}
		}
		out = append(out, fe)
		return nil
	})
	return out
}

// Filesystem magic numbers of network filesystems (linux/magic.h).
var networkMagics = map[int64]bool{
	0x6969:     true, // NFS
	0xFF534D42: true, // CIFS
	0x517B:     true, // SMB
	0xFE534D42: true, // SMB2
	0x65735546: true, // FUSE
}

// onNetworkMount reports whether dir is on a network filesystem, where
// inotify sees only local changes.
func onNetworkMount(dir string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return false
	}
	return networkMagics[int64(st.Type)]
}
