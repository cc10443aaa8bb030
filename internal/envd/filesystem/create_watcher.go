package filesystem

import (
	"context"
	"crypto/rand"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
)

// CreateWatcher implements filesystemconnect.FilesystemHandler: a watcher
// whose events are collected for GetWatcherEvents, for clients that cannot
// hold a stream open.
func (s *Service) CreateWatcher(ctx context.Context, req *connect.Request[pb.CreateWatcherRequest]) (*connect.Response[pb.CreateWatcherResponse], error) {
	_, path, err := s.resolve(req.Header(), req.Msg.GetPath())
	if err != nil {
		return nil, rpc.Error(err)
	}
	opts := watchOptions{
		path: path, recursive: req.Msg.GetRecursive(),
		includeEntry: req.Msg.GetIncludeEntry(), allowNetworkMounts: req.Msg.GetAllowNetworkMounts(),
	}
	w, err := newWatcher(ctx, path, opts, s.st.Users.Names())
	if err != nil {
		return nil, rpc.Error(err)
	}
	id := rand.Text()
	pw := startPollWatcher(ctx, w, func() { s.removeWatcher(id) })
	s.mu.Lock()
	s.watchers[id] = pw
	s.mu.Unlock()
	return connect.NewResponse(&pb.CreateWatcherResponse{WatcherId: id}), nil
}

// removeWatcher stops and forgets a polling watcher; false if unknown.
func (s *Service) removeWatcher(id string) bool {
	s.mu.Lock()
	pw, ok := s.watchers[id]
	delete(s.watchers, id)
	s.mu.Unlock()
	if ok {
		pw.stop()
	}
	return ok
}

func (s *Service) pollWatcher(id string) (*pollWatcher, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pw, ok := s.watchers[id]
	return pw, ok
}
