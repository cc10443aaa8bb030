package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// ListDir implements filesystemconnect.FilesystemHandler: a flat list of
// everything up to depth levels below path (0 counts as 1), without the
// root and without descending into symlinked directories. A symlink as the
// requested path itself is followed.
func (s *Service) ListDir(ctx context.Context, req *connect.Request[pb.ListDirRequest]) (*connect.Response[pb.ListDirResponse], error) {
	_, path, err := s.resolve(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, rpc.Error(err)
	}
	depth := int(max(req.Msg.GetDepth(), 1))
	root, err := filepath.EvalSymlinks(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, rpc.Error(errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("directory '%s' does not exist", path)))
		}
		return nil, rpc.Error(fmt.Errorf("resolving %s: %w", path, err))
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return nil, rpc.Error(errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path '%s' is not a directory", path)))
	}
	entries, err := walk(ctx, path, root, depth, s.st.Users.Names())
	if err != nil {
		return nil, rpc.Error(err)
	}
	return connect.NewResponse(&pb.ListDirResponse{Entries: entries}), nil
}

// walk lists root's tree to depth levels; entry paths are built from the
// requested path, not the resolved root.
func walk(ctx context.Context, requested, root string, depth int, names *users.Names) ([]*pb.EntryInfo, error) {
	var entries []*pb.EntryInfo
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if err != nil {
			if p == root {
				return err
			}
			return nil // vanished or unreadable: list what we can
		}
		if p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		level := strings.Count(rel, string(filepath.Separator)) + 1
		fi, err := d.Info()
		if err != nil {
			return nil
		}
		entries = append(entries, EntryFromInfo(filepath.Join(requested, rel), fi, names))
		if d.IsDir() && level >= depth {
			return fs.SkipDir
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", requested, err)
	}
	return entries, nil
}
