package process

import (
	"context"
	"syscall"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// SendSignal implements processconnect.ProcessHandler. The signal goes to
// the whole process group, so children of a shell die with it.
func (s *Service) SendSignal(ctx context.Context, req *connect.Request[pb.SendSignalRequest]) (*connect.Response[pb.SendSignalResponse], error) {
	if _, err := rpc.User(s.st, req.Header()); err != nil {
		return nil, rpc.Error(err)
	}
	var sig syscall.Signal
	switch req.Msg.GetSignal() {
	case pb.Signal_SIGNAL_SIGKILL:
		sig = syscall.SIGKILL
	case pb.Signal_SIGNAL_SIGTERM:
		sig = syscall.SIGTERM
	default:
		return nil, rpc.Error(errdefs.New(errdefs.ErrInvalidArgument, "unsupported signal "+req.Msg.GetSignal().String()))
	}
	p, err := s.procs.findRunning(req.Msg.GetProcess())
	if err != nil {
		return nil, rpc.Error(err)
	}
	if err := s.reaper.Signal(p.pid, sig, true); err != nil {
		return nil, rpc.Error(err)
	}
	return connect.NewResponse(&pb.SendSignalResponse{}), nil
}
