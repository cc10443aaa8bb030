package process

import (
	"cmp"
	"context"
	"slices"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
)

// List implements processconnect.ProcessHandler: running processes only,
// ordered by pid.
func (s *Service) List(ctx context.Context, req *connect.Request[pb.ListRequest]) (*connect.Response[pb.ListResponse], error) {
	if _, err := rpc.User(s.st, req.Header()); err != nil {
		return nil, rpc.Error(err)
	}
	procs := s.procs.running()
	slices.SortFunc(procs, func(a, b *proc) int { return cmp.Compare(a.pid, b.pid) })
	resp := &pb.ListResponse{Processes: make([]*pb.ProcessInfo, 0, len(procs))}
	for _, p := range procs {
		resp.Processes = append(resp.Processes, p.info())
	}
	return connect.NewResponse(resp), nil
}
