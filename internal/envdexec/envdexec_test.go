package envdexec

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
)

// envd answers Start with events, after checking what it was asked.
type envd struct {
	processconnect.UnimplementedProcessHandler
	events []*pb.ProcessEvent
	seen   chan *connect.Request[pb.StartRequest]
}

func (e *envd) Start(_ context.Context, req *connect.Request[pb.StartRequest], s *connect.ServerStream[pb.StartResponse]) error {
	e.seen <- req
	for _, ev := range e.events {
		if err := s.Send(&pb.StartResponse{Event: ev}); err != nil {
			return err
		}
	}
	return nil
}

func data(out string) *pb.ProcessEvent {
	return &pb.ProcessEvent{Event: &pb.ProcessEvent_Data{Data: &pb.ProcessEvent_DataEvent{
		Output: &pb.ProcessEvent_DataEvent_Stdout{Stdout: []byte(out)}}}}
}

func end(code int32, exited bool) *pb.ProcessEvent {
	return &pb.ProcessEvent{Event: &pb.ProcessEvent_End{End: &pb.ProcessEvent_EndEvent{ExitCode: code, Exited: exited}}}
}

func TestRun(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		cmd      Command
		events   []*pb.ProcessEvent
		wantCode int
		wantErr  string
		wantOut  string
		wantArgs []string
		wantAuth string // user:
	}{
		{name: "exit 0 with output", cmd: Command{Command: "echo hi"}, events: []*pb.ProcessEvent{data("hi\n"), end(0, true)},
			wantOut: "hi\n", wantArgs: []string{"-c", "echo hi"}, wantAuth: "root:"},
		{name: "exit code passed on", cmd: Command{Command: "false", User: "user", Shell: []string{"/bin/bash", "-lc"}},
			events: []*pb.ProcessEvent{end(3, true)}, wantCode: 3, wantArgs: []string{"-lc", "false"}, wantAuth: "user:"},
		{name: "killed by a signal", cmd: Command{Command: "sleep 9"}, events: []*pb.ProcessEvent{end(0, false)},
			wantCode: -1, wantErr: "did not exit normally", wantArgs: []string{"-c", "sleep 9"}, wantAuth: "root:"},
		{name: "no end event", cmd: Command{Command: "x"}, events: []*pb.ProcessEvent{data("partial")},
			wantErr: "without an exit status", wantOut: "partial", wantArgs: []string{"-c", "x"}, wantAuth: "root:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := &envd{events: tc.events, seen: make(chan *connect.Request[pb.StartRequest], 1)}
			path, h := processconnect.NewProcessHandler(e)
			mux := http.NewServeMux()
			mux.Handle(path, h)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			var out bytes.Buffer
			tc.cmd.Output, tc.cmd.Token = &out, "tok"
			code, err := Run(context.Background(), srv.Client(), srv.URL, tc.cmd)
			if code != tc.wantCode || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Run = %d, %v; want %d, error containing %q", code, err, tc.wantCode, tc.wantErr)
			}
			if out.String() != tc.wantOut {
				t.Errorf("output %q, want %q", out.String(), tc.wantOut)
			}
			req := <-e.seen
			if got := req.Msg.GetProcess().GetArgs(); strings.Join(got, "\x00") != strings.Join(tc.wantArgs, "\x00") {
				t.Errorf("args %q, want %q", got, tc.wantArgs)
			}
			if got := req.Header().Get("X-Access-Token"); got != "tok" {
				t.Errorf("access token %q", got)
			}
			if u, _, ok := basicAuth(req.Header().Get("Authorization")); !ok || u+":" != tc.wantAuth {
				t.Errorf("authorization for %q, want %q", u, tc.wantAuth)
			}
		})
	}
}

func basicAuth(h string) (user, pass string, ok bool) {
	r := &http.Request{Header: http.Header{"Authorization": {h}}}
	return r.BasicAuth()
}
