package process

import (
	"context"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
)

// CloseStdin implements processconnect.ProcessHandler: EOF on stdin. Not
// allowed for a PTY process, where ^D does the job.
func (s *Service) CloseStdin(ctx context.Context, req *connect.Request[pb.CloseStdinRequest]) (*connect.Response[pb.CloseStdinResponse], error) {
	if _, err := rpc.User(s.st, req.Header()); err != nil {
		return nil, rpc.Error(err)
	}
	p, err := s.procs.findRunning(req.Msg.GetProcess())
	if err != nil {
		return nil, rpc.Error(err)
	}
	if err := p.closeStdin(); err != nil {
		return nil, rpc.Error(err)
	}
	return connect.NewResponse(&pb.CloseStdinResponse{}), nil
}
