// Package filesystem implements envd's filesystem.Filesystem Connect service
// and the file helpers the /files endpoints share with it: EntryInfo
// building, user-owned directory creation and metadata kept in extended
// attributes.
//
// Operations run as envd (root in a sandbox); anything they create is then
// handed to the selected user, as E2B's envd does.
package filesystem

import (
	"net/http"
	"sync"

	"connectrpc.com/connect"

	"github.com/warren-sandbox/warren/api/gen/filesystem/filesystemconnect"
	"github.com/warren-sandbox/warren/internal/envd/rpc"
	"github.com/warren-sandbox/warren/internal/envd/state"
	"github.com/warren-sandbox/warren/internal/envd/users"
)

// Service implements filesystemconnect.FilesystemHandler.
type Service struct {
	st *state.State

	mu sync.Mutex
	// watchers holds the polling watchers by id; guarded by mu.
	watchers map[string]*pollWatcher
}

var _ filesystemconnect.FilesystemHandler = (*Service)(nil)

// New returns a Service reading users and settings from st.
func New(st *state.State) *Service {
	return &Service{st: st, watchers: map[string]*pollWatcher{}}
}

// Handler returns the route prefix and HTTP handler serving the service.
func (s *Service) Handler(opts ...connect.HandlerOption) (string, http.Handler) {
	return filesystemconnect.NewFilesystemHandler(s, opts...)
}

// Close stops every polling watcher.
func (s *Service) Close() {
	s.mu.Lock()
	ws := s.watchers
	s.watchers = map[string]*pollWatcher{}
	s.mu.Unlock()
	for _, w := range ws {
		w.stop()
	}
}

// resolve picks the request's user and resolves p for them.
func (s *Service) resolve(h http.Header, p string) (*users.User, string, error) {
	u, err := rpc.User(s.st, h)
	if err != nil {
		return nil, "", err
	}
	return u, s.st.Resolve(p, u), nil
}
