package filesystem_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/filesystem"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

// watchEvents opens a WatchDir stream, checks start{} comes first, then
// applies change and gathers events until want has been seen.
func watchEvents(t *testing.T, ctx context.Context, e *envdtest.Env, req *pb.WatchDirRequest, change func(), want func([]*pb.FilesystemEvent) bool) []*pb.FilesystemEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	s, err := e.FilesystemClient().WatchDir(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Receive() || s.Msg().GetStart() == nil {
		t.Fatalf("first event is not start: %v %v", s.Msg(), s.Err())
	}
	change()
	var evs []*pb.FilesystemEvent
	for !want(evs) {
		if !s.Receive() {
			t.Fatalf("stream ended before the wanted events: %v (got %v)", s.Err(), evs)
		}
		if fe := s.Msg().GetFilesystem(); fe != nil {
			evs = append(evs, fe)
		}
	}
	return evs
}

func has(name string, typ pb.EventType) func([]*pb.FilesystemEvent) bool {
	return func(evs []*pb.FilesystemEvent) bool { return find(evs, name, typ) != nil }
}

func find(evs []*pb.FilesystemEvent, name string, typ pb.EventType) *pb.FilesystemEvent {
	for _, ev := range evs {
		if ev.GetName() == name && ev.GetType() == typ {
			return ev
		}
	}
	return nil
}

func TestWatchDirFlat(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	dir := t.TempDir()
	evs := watchEvents(t, t.Context(), e, &pb.WatchDirRequest{Path: dir}, func() {
		write(t, dir+"/a.txt", "x")
		_ = os.Remove(dir + "/a.txt")
	}, has("a.txt", pb.EventType_EVENT_TYPE_REMOVE))
	if find(evs, "a.txt", pb.EventType_EVENT_TYPE_CREATE) == nil || find(evs, "a.txt", pb.EventType_EVENT_TYPE_WRITE) == nil {
		t.Errorf("events = %v", evs)
	}
	if ev := find(evs, "a.txt", pb.EventType_EVENT_TYPE_CREATE); ev.Entry != nil {
		t.Errorf("entry without include_entry: %v", ev)
	}
}

func TestWatchDirRecursive(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	dir := t.TempDir()
	if err := os.Mkdir(dir+"/existing", 0o755); err != nil {
		t.Fatal(err)
	}
	req := &pb.WatchDirRequest{Path: dir, Recursive: true, IncludeEntry: true}
	evs := watchEvents(t, t.Context(), e, req, func() {
		write(t, dir+"/existing/a.txt", "x")
		// Made before envd can watch new/deep: seen all the same.
		write(t, dir+"/new/deep/b.txt", "yy")
	}, has("new/deep/b.txt", pb.EventType_EVENT_TYPE_CREATE))
	ev := find(evs, "existing/a.txt", pb.EventType_EVENT_TYPE_CREATE)
	if ev == nil || ev.GetEntry().GetPath() != dir+"/existing/a.txt" || ev.GetEntry().GetType() != pb.FileType_FILE_TYPE_FILE {
		t.Errorf("create event = %v (all %v)", ev, evs)
	}
}

func TestWatchDirKeepalive(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	c := e.FilesystemClient(envdtest.WithHeader("Keepalive-Ping-Interval", "0.1"))
	s, err := c.WatchDir(t.Context(), connect.NewRequest(&pb.WatchDirRequest{Path: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 3; i++ {
		if !s.Receive() {
			t.Fatal(s.Err())
		}
		if (i == 0) != (s.Msg().GetStart() != nil) || (i > 0 && s.Msg().GetKeepalive() == nil) {
			t.Fatalf("event %d = %v", i, s.Msg())
		}
	}
}

func TestWatchDirDeadline(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	s, err := e.FilesystemClient().WatchDir(ctx, connect.NewRequest(&pb.WatchDirRequest{Path: t.TempDir()}))
	if err != nil {
		t.Fatal(err)
	}
	for s.Receive() {
	}
	if connect.CodeOf(s.Err()) != connect.CodeDeadlineExceeded {
		t.Errorf("err = %v, want deadline_exceeded", s.Err())
	}
}

func TestWatchDirErrors(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	dir := t.TempDir()
	write(t, dir+"/file", "x")
	tests := []struct {
		name, path string
		code       connect.Code
	}{
		{"missing", dir + "/nope", connect.CodeNotFound},
		{"not a directory", dir + "/file", connect.CodeInvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := e.FilesystemClient().WatchDir(t.Context(), connect.NewRequest(&pb.WatchDirRequest{Path: tt.path}))
			if err == nil {
				for s.Receive() {
					t.Errorf("unexpected event %v", s.Msg())
				}
				err = s.Err()
			}
			if connect.CodeOf(err) != tt.code {
				t.Errorf("err = %v, want %v", err, tt.code)
			}
			_, err = e.FilesystemClient().CreateWatcher(t.Context(), connect.NewRequest(&pb.CreateWatcherRequest{Path: tt.path}))
			if connect.CodeOf(err) != tt.code {
				t.Errorf("CreateWatcher err = %v, want %v", err, tt.code)
			}
		})
	}
}

func TestPollingWatcher(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	dir := t.TempDir()
	created, err := c.CreateWatcher(t.Context(), connect.NewRequest(&pb.CreateWatcherRequest{Path: dir, Recursive: true}))
	if err != nil {
		t.Fatal(err)
	}
	id := created.Msg.GetWatcherId()
	write(t, dir+"/a.txt", "x")

	var evs []*pb.FilesystemEvent
	envdtest.Eventually(t, 5*time.Second, func() bool {
		resp, err := c.GetWatcherEvents(t.Context(), connect.NewRequest(&pb.GetWatcherEventsRequest{WatcherId: id}))
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, resp.Msg.GetEvents()...)
		return find(evs, "a.txt", pb.EventType_EVENT_TYPE_WRITE) != nil
	}, "no write event, got %v", evs)
	if find(evs, "a.txt", pb.EventType_EVENT_TYPE_CREATE) == nil {
		t.Errorf("events = %v", evs)
	}
	// Drained: the next poll is empty.
	resp, err := c.GetWatcherEvents(t.Context(), connect.NewRequest(&pb.GetWatcherEventsRequest{WatcherId: id}))
	if err != nil || len(resp.Msg.GetEvents()) != 0 {
		t.Errorf("second poll = %v, %v", resp, err)
	}
	if _, err := c.RemoveWatcher(t.Context(), connect.NewRequest(&pb.RemoveWatcherRequest{WatcherId: id})); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"remove again": func() error {
			_, err := c.RemoveWatcher(t.Context(), connect.NewRequest(&pb.RemoveWatcherRequest{WatcherId: id}))
			return err
		},
		"poll removed": func() error {
			_, err := c.GetWatcherEvents(t.Context(), connect.NewRequest(&pb.GetWatcherEventsRequest{WatcherId: id}))
			return err
		},
	} {
		if err := call(); connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("%s: %v, want not_found", name, err)
		}
	}
}

// TestBadDepth sends a depth that is not a uint32, as raw Connect JSON.
func TestBadDepth(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	for _, body := range []string{`{"path":"/","depth":-1}`, `{"path":"/","depth":"deep"}`, `{"path":"/","depth":4294967296}`} {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, e.HTTP.URL+"/filesystem.Filesystem/ListDir", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Connect-Protocol-Version", "1")
		resp, err := e.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(got), `"code":"invalid_argument"`) {
			t.Errorf("%s: %d %s", body, resp.StatusCode, got)
		}
	}
}

func TestWatchNoGoroutineLeak(t *testing.T) {
	e := envdtest.New(t)
	c := e.FilesystemClient()
	dir := t.TempDir()
	// Warm up the connection and anything started lazily.
	if _, err := c.Stat(t.Context(), connect.NewRequest(&pb.StatRequest{Path: dir})); err != nil {
		t.Fatal(err)
	}
	e.Client.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	check := envdtest.NoGoroutineLeak(t)

	watchEvents(t, t.Context(), e, &pb.WatchDirRequest{Path: dir, Recursive: true}, func() {
		write(t, dir+"/a", "x")
	}, has("a", pb.EventType_EVENT_TYPE_CREATE))
	created, err := c.CreateWatcher(t.Context(), connect.NewRequest(&pb.CreateWatcherRequest{Path: dir}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.RemoveWatcher(t.Context(), connect.NewRequest(&pb.RemoveWatcherRequest{WatcherId: created.Msg.GetWatcherId()})); err != nil {
		t.Fatal(err)
	}
	e.Client.CloseIdleConnections()
	check()
}
