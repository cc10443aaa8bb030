package filesystem

import (
	"context"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
)

// Stat implements filesystemconnect.FilesystemHandler.
func (s *Service) Stat(ctx context.Context, req *connect.Request[pb.StatRequest]) (*connect.Response[pb.StatResponse], error) {
	_, path, err := s.resolve(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, rpc.Error(err)
	}
	e, err := Entry(path, s.st.Users.Names())
	if err != nil {
		return nil, rpc.Error(err)
	}
	return connect.NewResponse(&pb.StatResponse{Entry: e}), nil
}
