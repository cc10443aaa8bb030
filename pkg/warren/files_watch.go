package warren

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"

	fs "github.com/warren-sandbox/warren/api/gen/filesystem"
)

// FsEvent is one change under a watched directory.
type FsEvent struct {
	// Name is the changed entry's path relative to the watched directory.
	Name string
	// Type is "create", "write", "remove", "rename" or "chmod".
	Type string
}

var eventTypes = map[fs.EventType]string{
	fs.EventType_EVENT_TYPE_CREATE: "create",
	fs.EventType_EVENT_TYPE_WRITE:  "write",
	fs.EventType_EVENT_TYPE_REMOVE: "remove",
	fs.EventType_EVENT_TYPE_RENAME: "rename",
	fs.EventType_EVENT_TYPE_CHMOD:  "chmod",
}

// WatchOptions are a watch's settings.
type WatchOptions struct {
	Recursive bool
	User      string
}

// Watcher follows changes under a directory until Stop or its context
// ends.
type Watcher struct {
	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Watch calls on for each change under the directory path, from the
// moment it returns. ctx bounds the watch; Stop ends it sooner.
func (f *Files) Watch(ctx context.Context, path string, o WatchOptions, on func(FsEvent)) (*Watcher, error) {
	ctx, cancel := context.WithCancel(ctx)
	req := connect.NewRequest(&fs.WatchDirRequest{Path: path, Recursive: o.Recursive})
	streamHeaders(req.Header(), o.User)
	stream, err := f.rpc.WatchDir(ctx, req)
	if err != nil {
		cancel()
		return nil, rpcError(err)
	}
	if !stream.Receive() || stream.Msg().GetStart() == nil {
		err := stream.Err()
		stream.Close()
		cancel()
		if err == nil {
			err = errors.New("the watch's stream did not start")
		}
		return nil, fmt.Errorf("warren: watch %s: %w", path, rpcError(err))
	}
	w := &Watcher{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer stream.Close()
		for stream.Receive() {
			if ev := stream.Msg().GetFilesystem(); ev != nil {
				on(FsEvent{Name: ev.GetName(), Type: eventTypes[ev.GetType()]})
			}
		}
		if err := stream.Err(); err != nil && ctx.Err() == nil {
			w.err = rpcError(err)
		}
	}()
	return w, nil
}

// Stop ends the watch and waits until no more events will be delivered.
func (w *Watcher) Stop() {
	w.cancel()
	<-w.done
}

// Err is why the watch ended on its own (nil after Stop or while it
// runs).
func (w *Watcher) Err() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}
