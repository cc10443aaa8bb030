package process

import (
	"context"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// SendInput implements processconnect.ProcessHandler.
func (s *Service) SendInput(ctx context.Context, req *connect.Request[pb.SendInputRequest]) (*connect.Response[pb.SendInputResponse], error) {
	if _, err := rpc.User(s.st, req.Header()); err != nil {
		return nil, rpc.Error(err)
	}
	p, err := s.procs.findRunning(req.Msg.GetProcess())
	if err != nil {
		return nil, rpc.Error(err)
	}
	if err := writeInput(ctx, p, req.Msg.GetInput()); err != nil {
		return nil, rpc.Error(err)
	}
	return connect.NewResponse(&pb.SendInputResponse{}), nil
}

// writeInput routes input to the stdin pipe or the PTY.
func writeInput(ctx context.Context, p *proc, in *pb.ProcessInput) error {
	switch v := in.GetInput().(type) {
	case *pb.ProcessInput_Stdin:
		return p.writeStdin(ctx, v.Stdin)
	case *pb.ProcessInput_Pty:
		return p.writePTY(ctx, v.Pty)
	default:
		return errdefs.New(errdefs.ErrInvalidArgument, "input needs stdin or pty data")
	}
}
