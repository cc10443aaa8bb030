package filesystem

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// RemoveWatcher implements filesystemconnect.FilesystemHandler. An unknown
// id is not_found.
func (s *Service) RemoveWatcher(ctx context.Context, req *connect.Request[pb.RemoveWatcherRequest]) (*connect.Response[pb.RemoveWatcherResponse], error) {
	if _, err := rpc.User(s.st, req.Header()); err != nil {
		return nil, rpc.Error(err)
	}
	if !s.removeWatcher(req.Msg.GetWatcherId()) {
		return nil, rpc.Error(errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("watcher %q not found", req.Msg.GetWatcherId())))
	}
	return connect.NewResponse(&pb.RemoveWatcherResponse{}), nil
}
