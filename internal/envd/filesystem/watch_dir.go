package filesystem

import (
	"context"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/log"
)

// WatchDir implements filesystemconnect.FilesystemHandler: start{} once the
// watch is in place, then filesystem events and keepalives until the client
// goes away or Connect-Timeout-Ms runs out.
func (s *Service) WatchDir(ctx context.Context, req *connect.Request[pb.WatchDirRequest], stream *connect.ServerStream[pb.WatchDirResponse]) error {
	_, path, err := s.resolve(req.Header(), req.Msg.GetPath())
	if err != nil {
		return rpc.Error(err)
	}
	opts := watchOptions{
		path: path, recursive: req.Msg.GetRecursive(),
		includeEntry: req.Msg.GetIncludeEntry(), allowNetworkMounts: req.Msg.GetAllowNetworkMounts(),
	}
	w, err := newWatcher(ctx, path, opts, s.st.Users.Names())
	if err != nil {
		return rpc.Error(err)
	}
	defer w.close()

	start := &pb.WatchDirResponse{Event: &pb.WatchDirResponse_Start{Start: &pb.WatchDirResponse_StartEvent{}}}
	if err := stream.Send(start); err != nil {
		return err
	}
	interval := rpc.KeepaliveInterval(req.Header())
	keepalive := time.NewTimer(interval)
	defer keepalive.Stop()
	for {
		select {
		case <-ctx.Done():
			return rpc.StreamEnd(ctx)
		case <-keepalive.C:
			ka := &pb.WatchDirResponse{Event: &pb.WatchDirResponse_Keepalive{Keepalive: &pb.WatchDirResponse_KeepAlive{}}}
			if err := stream.Send(ka); err != nil {
				return err
			}
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return nil
			}
			for _, fe := range w.convert(ctx, ev) {
				if err := stream.Send(&pb.WatchDirResponse{Event: &pb.WatchDirResponse_Filesystem{Filesystem: fe}}); err != nil {
					return err
				}
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return nil
			}
			log.G(ctx).Warn("watch error", "path", path, "err", err)
		}
		keepalive.Reset(interval)
	}
}
