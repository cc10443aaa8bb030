package process

import (
	"context"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// StreamInput implements processconnect.ProcessHandler: a start message
// selecting the process, then data messages written in order.
func (s *Service) StreamInput(ctx context.Context, stream *connect.ClientStream[pb.StreamInputRequest]) (*connect.Response[pb.StreamInputResponse], error) {
	if _, err := rpc.User(s.st, stream.RequestHeader()); err != nil {
		return nil, rpc.Error(err)
	}
	var p *proc
	for stream.Receive() {
		switch ev := stream.Msg().GetEvent().(type) {
		case *pb.StreamInputRequest_Start:
			found, err := s.procs.findRunning(ev.Start.GetProcess())
			if err != nil {
				return nil, rpc.Error(err)
			}
			p = found
		case *pb.StreamInputRequest_Data:
			if p == nil {
				return nil, rpc.Error(errdefs.New(errdefs.ErrInvalidArgument, "input stream must start with a start event"))
			}
			if err := writeInput(ctx, p, ev.Data.GetInput()); err != nil {
				return nil, rpc.Error(err)
			}
		case *pb.StreamInputRequest_Keepalive:
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	return connect.NewResponse(&pb.StreamInputResponse{}), nil
}
