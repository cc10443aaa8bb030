package filesystem

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// GetWatcherEvents implements filesystemconnect.FilesystemHandler: the
// events collected since the previous call.
func (s *Service) GetWatcherEvents(ctx context.Context, req *connect.Request[pb.GetWatcherEventsRequest]) (*connect.Response[pb.GetWatcherEventsResponse], error) {
	if _, err := rpc.User(s.st, req.Header()); err != nil {
		return nil, rpc.Error(err)
	}
	pw, ok := s.pollWatcher(req.Msg.GetWatcherId())
	if !ok {
		return nil, rpc.Error(errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("watcher %q not found", req.Msg.GetWatcherId())))
	}
	return connect.NewResponse(&pb.GetWatcherEventsResponse{Events: pw.drain(ctx)}), nil
}
