package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// errShutdown is what a tool call gets once the server is closing.
var errShutdown = errors.New("the MCP server is shutting down")

// Timeouts of the calls the bookkeeping makes on its own behalf.
const (
	createTimeout = 3 * time.Minute  // a create may wait for a template's first boot
	killTimeout   = 30 * time.Second // a kill at the end of a session
)

// sessionMetadataKey marks the sandboxes the server creates for sessions,
// so that an operator can find (and reap) them with a metadata filter.
const sessionMetadataKey = "warren-mcp"

// sessions keeps one sandbox per MCP session: created on the session's
// first tool call without a sandboxId, kept alive while it is used, and
// killed when the session ends or the server closes.
type sessions struct {
	client   *warren.Client
	template string
	timeout  time.Duration // the session sandbox's lifetime, renewed on use
	log      *slog.Logger

	mu     sync.Mutex // mu protects slots and closed
	slots  map[*mcp.ServerSession]*slot
	closed bool
	ending sync.WaitGroup // ends in progress; Close waits for them
}

// slot is one session's sandbox. Its mutex is held while the sandbox is
// created, so that concurrent first calls share one sandbox.
type slot struct {
	mu       sync.Mutex // mu protects the fields below
	sb       *warren.Sandbox
	deadline time.Time // when the sandbox would end unless renewed
	ended    bool      // the session is over: create nothing more
}

func newSessions(c *warren.Client, template string, timeout time.Duration, log *slog.Logger) *sessions {
	return &sessions{client: c, template: template, timeout: timeout, log: log,
		slots: make(map[*mcp.ServerSession]*slot)}
}

// sandbox returns the session's sandbox, creating it on first use and
// renewing its timeout when less than half of it is left.
func (s *sessions) sandbox(ctx context.Context, ss *mcp.ServerSession) (*warren.Sandbox, error) {
	sl, err := s.slot(ss)
	if err != nil {
		return nil, err
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.ended {
		return nil, errors.New("the MCP session has ended")
	}
	if sl.sb != nil {
		return s.renew(ctx, ss, sl)
	}
	return s.create(ctx, ss, sl)
}

// slot returns the session's slot, adding one (and a watcher that ends it
// with the session) on the session's first call.
func (s *sessions) slot(ss *mcp.ServerSession) (*slot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errShutdown
	}
	if sl, ok := s.slots[ss]; ok {
		return sl, nil
	}
	sl := &slot{}
	s.slots[ss] = sl
	go func() {
		_ = ss.Wait()
		s.end(ss)
	}()
	return sl, nil
}

// create starts the session's sandbox; sl.mu is held. The create is not
// cancelled with the call, so that a sandbox the server made is never
// lost: the session's end kills it.
func (s *sessions) create(ctx context.Context, ss *mcp.ServerSession, sl *slot) (*warren.Sandbox, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), createTimeout)
	defer cancel()
	sb, err := s.client.Create(ctx, s.template, warren.CreateOptions{Timeout: s.timeout,
		Metadata: map[string]string{sessionMetadataKey: "session"}})
	if err != nil {
		return nil, fmt.Errorf("creating the session's sandbox from template %q: %w", s.template, err)
	}
	sl.sb, sl.deadline = sb, time.Now().Add(s.timeout)
	s.log.Info("created the session's sandbox", append(sessionAttr(ss), "sandbox", sb.ID, "template", s.template)...)
	return sb, nil
}

// renew extends the session's sandbox when half its timeout has passed;
// one that has ended meanwhile is replaced, which the log says.
func (s *sessions) renew(ctx context.Context, ss *mcp.ServerSession, sl *slot) (*warren.Sandbox, error) {
	if time.Until(sl.deadline) > s.timeout/2 {
		return sl.sb, nil
	}
	err := sl.sb.SetTimeout(ctx, s.timeout)
	switch {
	case err == nil:
		sl.deadline = time.Now().Add(s.timeout)
		return sl.sb, nil
	case errors.Is(err, warren.ErrNotFound):
		s.log.Warn("the session's sandbox has ended; creating another", append(sessionAttr(ss), "sandbox", sl.sb.ID)...)
		sl.sb = nil
		return s.create(ctx, ss, sl)
	}
	return nil, fmt.Errorf("renewing the session's sandbox %s: %w", sl.sb.ID, err)
}

// forget drops the session's sandbox if it is id (kill_sandbox killed
// it), so that the session's next call creates a new one.
func (s *sessions) forget(ss *mcp.ServerSession, id string) {
	s.mu.Lock()
	sl := s.slots[ss]
	s.mu.Unlock()
	if sl == nil {
		return
	}
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.sb != nil && sl.sb.ID == id {
		sl.sb = nil
	}
}

// end kills the session's sandbox and forgets the session. It waits for a
// create in progress, so that the sandbox it makes is killed too.
func (s *sessions) end(ss *mcp.ServerSession) {
	s.mu.Lock()
	sl, ok := s.slots[ss]
	delete(s.slots, ss)
	if ok {
		s.ending.Add(1)
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	defer s.ending.Done()
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.ended = true
	if sl.sb == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), killTimeout)
	defer cancel()
	if err := sl.sb.Kill(ctx); err != nil && !errors.Is(err, warren.ErrNotFound) {
		s.log.Error("killing the session's sandbox", append(sessionAttr(ss), "sandbox", sl.sb.ID, "err", err)...)
		return
	}
	s.log.Info("killed the session's sandbox", append(sessionAttr(ss), "sandbox", sl.sb.ID)...)
}

// close ends every session's sandbox, refuses new ones, and returns once
// all kills, the watchers' included, are done.
func (s *sessions) close() {
	s.mu.Lock()
	s.closed = true
	var all []*mcp.ServerSession
	for ss := range s.slots {
		all = append(all, ss)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, ss := range all {
		wg.Go(func() { s.end(ss) })
	}
	wg.Wait()
	s.ending.Wait()
}

// sessionAttr names the session in a log line; a stdio session has no id.
func sessionAttr(ss *mcp.ServerSession) []any {
	if id := ss.ID(); id != "" {
		return []any{"session", id}
	}
	return nil
}
