package filesystem

import (
	"context"
	"fmt"
	"os"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
)

// Remove implements filesystemconnect.FilesystemHandler. Like E2B's envd it
// removes recursively, and a missing path is not an error.
func (s *Service) Remove(ctx context.Context, req *connect.Request[pb.RemoveRequest]) (*connect.Response[pb.RemoveResponse], error) {
	_, path, err := s.resolve(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, rpc.Error(err)
	}
	if err := os.RemoveAll(path); err != nil {
		return nil, rpc.Error(fmt.Errorf("removing %s: %w", path, err))
	}
	return connect.NewResponse(&pb.RemoveResponse{}), nil
}
