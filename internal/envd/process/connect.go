package process

import (
	"context"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
)

// Connect implements processconnect.ProcessHandler. It re-attaches to a
// process: start{pid}, then live output, then end; for a process that has
// already exited but is still retained, start then its end.
func (s *Service) Connect(ctx context.Context, req *connect.Request[pb.ConnectRequest], stream *connect.ServerStream[pb.ConnectResponse]) error {
	if _, err := rpc.User(s.st, req.Header()); err != nil {
		return rpc.Error(err)
	}
	p, err := s.procs.find(req.Msg.GetProcess())
	if err != nil {
		return rpc.Error(err)
	}
	sub := p.out.subscribe()
	defer sub.Close()
	send := func(ev *pb.ProcessEvent) error { return stream.Send(&pb.ConnectResponse{Event: ev}) }
	if err := send(startEvent(p.pid)); err != nil {
		return err
	}
	return forward(ctx, sub, rpc.KeepaliveInterval(req.Header()), send)
}
