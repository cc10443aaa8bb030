package filesystem

import (
	"context"
	"errors"
	"fmt"
	"os"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// MakeDir implements filesystemconnect.FilesystemHandler. It creates
// parents; an existing directory is already_exists (the SDK then returns
// false), anything else in the way is invalid_argument.
func (s *Service) MakeDir(ctx context.Context, req *connect.Request[pb.MakeDirRequest]) (*connect.Response[pb.MakeDirResponse], error) {
	u, path, err := s.resolve(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, rpc.Error(err)
	}
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return nil, rpc.Error(errdefs.New(errdefs.ErrAlreadyExists, fmt.Sprintf("directory '%s' already exists", path)))
		}
		return nil, rpc.Error(errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("path '%s' exists but is not a directory", path)))
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, rpc.Error(errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("cannot create directory '%s': %v", path, err)))
	}
	if err := MkdirAllOwned(path, u); err != nil {
		return nil, rpc.Error(err)
	}
	e, err := Entry(path, s.st.Users.Names())
	if err != nil {
		return nil, rpc.Error(err)
	}
	return connect.NewResponse(&pb.MakeDirResponse{Entry: e}), nil
}
