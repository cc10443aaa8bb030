package filesystem

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Move implements filesystemconnect.FilesystemHandler. Missing parents of
// the destination are created for the user.
func (s *Service) Move(ctx context.Context, req *connect.Request[pb.MoveRequest]) (*connect.Response[pb.MoveResponse], error) {
	u, src, err := s.resolve(req.Header(), req.Msg.GetSource())
	if err != nil {
		return nil, rpc.Error(err)
	}
	dst := s.st.Resolve(req.Msg.GetDestination(), u)
	if _, err := os.Lstat(src); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, rpc.Error(errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("source '%s' does not exist", src)))
		}
		return nil, rpc.Error(fmt.Errorf("stat %s: %w", src, err))
	}
	if err := MkdirAllOwned(filepath.Dir(dst), u); err != nil {
		return nil, rpc.Error(err)
	}
	if err := rename(src, dst); err != nil {
		return nil, rpc.Error(err)
	}
	e, err := Entry(dst, s.st.Users.Names())
	if err != nil {
		return nil, rpc.Error(err)
	}
	return connect.NewResponse(&pb.MoveResponse{Entry: e}), nil
}

// rename is os.Rename with a copy fallback for a regular file moving across
// filesystems (e.g. from a tmpfs /tmp into the overlay root).
func rename(src, dst string) error {
	err := os.Rename(src, dst)
	if err == nil {
		return nil
	}
	if !errors.Is(err, syscall.EXDEV) {
		return fmt.Errorf("moving %s to %s: %w", src, dst, err)
	}
	fi, statErr := os.Lstat(src)
	if statErr != nil || !fi.Mode().IsRegular() {
		return errdefs.New(errdefs.ErrFailedPrecondition, fmt.Sprintf("cannot move '%s' across filesystems: only regular files can be", src))
	}
	if err := copyFile(src, dst, fi); err != nil {
		return err
	}
	if err := os.Remove(src); err != nil {
		return fmt.Errorf("removing %s after copy: %w", src, err)
	}
	return nil
}

func copyFile(src, dst string, fi os.FileInfo) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("opening %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fi.Mode().Perm())
	if err != nil {
		return fmt.Errorf("creating %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return fmt.Errorf("copying %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("closing %s: %w", dst, err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
		_ = os.Lchown(dst, int(st.Uid), int(st.Gid))
	}
	return nil
}
