package process

import (
	"context"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Update implements processconnect.ProcessHandler: it resizes the PTY.
func (s *Service) Update(ctx context.Context, req *connect.Request[pb.UpdateRequest]) (*connect.Response[pb.UpdateResponse], error) {
	if _, err := rpc.User(s.st, req.Header()); err != nil {
		return nil, rpc.Error(err)
	}
	p, err := s.procs.findRunning(req.Msg.GetProcess())
	if err != nil {
		return nil, rpc.Error(err)
	}
	if req.Msg.Pty != nil {
		if p.pty == nil {
			return nil, rpc.Error(errdefs.New(errdefs.ErrFailedPrecondition, "process has no PTY to resize"))
		}
		if err := resize(p.pty, req.Msg.GetPty().GetSize()); err != nil {
			return nil, rpc.Error(err)
		}
	}
	return connect.NewResponse(&pb.UpdateResponse{}), nil
}
