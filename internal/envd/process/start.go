package process

import (
	"context"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/log"
)

// Start implements processconnect.ProcessHandler. It streams start{pid},
// then the output, then exactly one end. The process outlives the stream,
// except that Connect-Timeout-Ms bounds its lifetime.
func (s *Service) Start(ctx context.Context, req *connect.Request[pb.StartRequest], stream *connect.ServerStream[pb.StartResponse]) error {
	u, err := rpc.User(s.st, req.Header())
	if err != nil {
		return rpc.Error(err)
	}
	ctx = log.With(ctx, "user", u.Name)
	deadline, _ := ctx.Deadline()
	p, sub, err := s.spawn(ctx, spawnRequest{user: u, msg: req.Msg, deadline: deadline})
	if err != nil {
		log.G(ctx).Debug("start failed", "err", err)
		return rpc.Error(err)
	}
	defer sub.Close()
	send := func(ev *pb.ProcessEvent) error { return stream.Send(&pb.StartResponse{Event: ev}) }
	if err := send(startEvent(p.pid)); err != nil {
		return err
	}
	return forward(ctx, sub, rpc.KeepaliveInterval(req.Header()), send)
}
