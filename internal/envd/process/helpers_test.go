package process_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

// result is what one Start or Connect stream delivered.
type result struct {
	pid                 uint32
	stdout, stderr, pty bytes.Buffer
	end                 *pb.ProcessEvent_EndEvent
	keepalives          int
	err                 error // the stream's final error
	orderErr            error // a violation of start-first / one-end-last
}

// collect reads a stream to its end and checks the event order contract:
// start first, then data and keepalives, then exactly one end, last.
func collect[T any, PT interface {
	*T
	GetEvent() *pb.ProcessEvent
}](s *connect.ServerStreamForClient[T]) *result {
	r := &result{}
	first := true
	for s.Receive() {
		ev := PT(s.Msg()).GetEvent()
		if r.end != nil && r.orderErr == nil {
			r.orderErr = errors.New("event after end")
		}
		if first != (ev.GetStart() != nil) && r.orderErr == nil {
			r.orderErr = errors.New("start is not (only) the first event")
		}
		first = false
		switch e := ev.GetEvent().(type) {
		case *pb.ProcessEvent_Start:
			r.pid = e.Start.GetPid()
		case *pb.ProcessEvent_Data:
			r.stdout.Write(e.Data.GetStdout())
			r.stderr.Write(e.Data.GetStderr())
			r.pty.Write(e.Data.GetPty())
		case *pb.ProcessEvent_End:
			r.end = e.End
		case *pb.ProcessEvent_Keepalive:
			r.keepalives++
		}
	}
	r.err = s.Err()
	_ = s.Close()
	return r
}

// startReq builds a StartRequest running script with /bin/sh -c.
func startReq(script string) *pb.StartRequest {
	stdin := false
	return &pb.StartRequest{Process: &pb.ProcessConfig{Cmd: "/bin/sh", Args: []string{"-c", script}}, Stdin: &stdin}
}

// run starts script and collects the whole stream.
func run(t *testing.T, c processconnect.ProcessClient, req *pb.StartRequest) *result {
	t.Helper()
	s, err := c.Start(t.Context(), connect.NewRequest(req))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	r := collect(s)
	if r.orderErr != nil {
		t.Fatalf("stream order: %v", r.orderErr)
	}
	return r
}

// started opens a Start stream and waits for its start event.
func started(t *testing.T, ctx context.Context, c processconnect.ProcessClient, req *pb.StartRequest) (*connect.ServerStreamForClient[pb.StartResponse], uint32) {
	t.Helper()
	s, err := c.Start(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if !s.Receive() {
		t.Fatalf("no start event: %v", s.Err())
	}
	pid := s.Msg().GetEvent().GetStart().GetPid()
	if pid == 0 {
		t.Fatalf("first event is not start: %v", s.Msg())
	}
	return s, pid
}

func byPid(pid uint32) *pb.ProcessSelector {
	return &pb.ProcessSelector{Selector: &pb.ProcessSelector_Pid{Pid: pid}}
}

func newEnv(t *testing.T) (*envdtest.Env, processconnect.ProcessClient) {
	t.Helper()
	e := envdtest.New(t)
	return e, e.ProcessClient()
}

func ptr[T any](v T) *T { return &v }
