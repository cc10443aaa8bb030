package process_test

import (
	"context"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

func TestStdin(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	tests := []struct {
		name  string
		stdin *bool
	}{
		{name: "explicit true", stdin: ptr(true)},
		{name: "absent means true", stdin: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			req := startReq("cat")
			req.Stdin = tt.stdin
			s, pid := started(t, t.Context(), c, req)
			in := &pb.ProcessInput{Input: &pb.ProcessInput_Stdin{Stdin: []byte("hello\n")}}
			if _, err := c.SendInput(t.Context(), connect.NewRequest(&pb.SendInputRequest{Process: byPid(pid), Input: in})); err != nil {
				t.Fatalf("SendInput: %v", err)
			}
			if _, err := c.CloseStdin(t.Context(), connect.NewRequest(&pb.CloseStdinRequest{Process: byPid(pid)})); err != nil {
				t.Fatalf("CloseStdin: %v", err)
			}
			r := collect(s)
			if r.stdout.String() != "hello\n" || r.end.GetExitCode() != 0 {
				t.Errorf("stdout %q, end %v, err %v", r.stdout.String(), r.end, r.err)
			}
		})
	}
}

func TestStdinDisabled(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	// With stdin false the child reads /dev/null, so cat ends at once.
	r := run(t, c, startReq("cat; echo done"))
	if r.stdout.String() != "done\n" {
		t.Errorf("stdout = %q", r.stdout.String())
	}
	s, pid := started(t, t.Context(), c, startReq("sleep 30"))
	defer s.Close()
	in := &pb.ProcessInput{Input: &pb.ProcessInput_Stdin{Stdin: []byte("x")}}
	_, err := c.SendInput(t.Context(), connect.NewRequest(&pb.SendInputRequest{Process: byPid(pid), Input: in}))
	if connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("SendInput without stdin: %v, want failed_precondition", err)
	}
	kill(t, c, pid)
}

func TestStreamInput(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	req := startReq("cat")
	req.Stdin = ptr(true)
	s, pid := started(t, t.Context(), c, req)
	in := c.StreamInput(t.Context())
	msgs := []*pb.StreamInputRequest{
		{Event: &pb.StreamInputRequest_Start{Start: &pb.StreamInputRequest_StartEvent{Process: byPid(pid)}}},
		{Event: &pb.StreamInputRequest_Data{Data: &pb.StreamInputRequest_DataEvent{Input: &pb.ProcessInput{Input: &pb.ProcessInput_Stdin{Stdin: []byte("a")}}}}},
		{Event: &pb.StreamInputRequest_Keepalive{Keepalive: &pb.StreamInputRequest_KeepAlive{}}},
		{Event: &pb.StreamInputRequest_Data{Data: &pb.StreamInputRequest_DataEvent{Input: &pb.ProcessInput{Input: &pb.ProcessInput_Stdin{Stdin: []byte("bc\n")}}}}},
	}
	for _, m := range msgs {
		if err := in.Send(m); err != nil {
			t.Fatalf("Send: %v", err)
		}
	}
	if _, err := in.CloseAndReceive(); err != nil {
		t.Fatalf("StreamInput: %v", err)
	}
	if _, err := c.CloseStdin(t.Context(), connect.NewRequest(&pb.CloseStdinRequest{Process: byPid(pid)})); err != nil {
		t.Fatal(err)
	}
	if r := collect(s); r.stdout.String() != "abc\n" {
		t.Errorf("stdout = %q (%v)", r.stdout.String(), r.err)
	}

	// Data before start is rejected.
	bad := c.StreamInput(t.Context())
	_ = bad.Send(msgs[1])
	if _, err := bad.CloseAndReceive(); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("data before start: %v", err)
	}
}

func kill(t *testing.T, c interface {
	SendSignal(context.Context, *connect.Request[pb.SendSignalRequest]) (*connect.Response[pb.SendSignalResponse], error)
}, pid uint32,
) {
	t.Helper()
	req := &pb.SendSignalRequest{Process: byPid(pid), Signal: pb.Signal_SIGNAL_SIGKILL}
	if _, err := c.SendSignal(t.Context(), connect.NewRequest(req)); err != nil {
		t.Fatalf("SendSignal: %v", err)
	}
}

func TestSendSignal(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	tests := []struct {
		sig    pb.Signal
		status string
	}{
		{pb.Signal_SIGNAL_SIGKILL, "signal: killed"},
		{pb.Signal_SIGNAL_SIGTERM, "signal: terminated"},
	}
	for _, tt := range tests {
		t.Run(tt.sig.String(), func(t *testing.T) {
			t.Parallel()
			// The child sleep is in the same process group and must die too.
			s, pid := started(t, t.Context(), c, startReq("sleep 30 & echo $!; wait"))
			if !s.Receive() {
				t.Fatalf("no output: %v", s.Err())
			}
			child, _ := strconv.Atoi(strings.TrimSpace(string(s.Msg().GetEvent().GetData().GetStdout())))
			req := &pb.SendSignalRequest{Process: byPid(pid), Signal: tt.sig}
			if _, err := c.SendSignal(t.Context(), connect.NewRequest(req)); err != nil {
				t.Fatal(err)
			}
			r := collect(s)
			if r.end.GetStatus() != tt.status || r.end.GetExitCode() != -1 || r.end.GetExited() {
				t.Errorf("end = %v", r.end)
			}
			envdtest.Eventually(t, 5*time.Second, func() bool { return dead(child) }, "child %d survived", child)
		})
	}
}

// dead reports whether pid is gone or a zombie.
func dead(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

func TestUnknownProcess(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	sel := byPid(999999)
	tag := &pb.ProcessSelector{Selector: &pb.ProcessSelector_Tag{Tag: "nope"}}
	calls := map[string]func() error{
		"SendSignal": func() error {
			_, err := c.SendSignal(t.Context(), connect.NewRequest(&pb.SendSignalRequest{Process: sel, Signal: pb.Signal_SIGNAL_SIGKILL}))
			return err
		},
		"SendSignal by tag": func() error {
			_, err := c.SendSignal(t.Context(), connect.NewRequest(&pb.SendSignalRequest{Process: tag, Signal: pb.Signal_SIGNAL_SIGKILL}))
			return err
		},
		"SendInput": func() error {
			_, err := c.SendInput(t.Context(), connect.NewRequest(&pb.SendInputRequest{Process: sel, Input: &pb.ProcessInput{}}))
			return err
		},
		"CloseStdin": func() error {
			_, err := c.CloseStdin(t.Context(), connect.NewRequest(&pb.CloseStdinRequest{Process: sel}))
			return err
		},
		"Update": func() error {
			_, err := c.Update(t.Context(), connect.NewRequest(&pb.UpdateRequest{Process: sel}))
			return err
		},
		"Connect": func() error {
			s, err := c.Connect(t.Context(), connect.NewRequest(&pb.ConnectRequest{Process: sel}))
			if err != nil {
				return err
			}
			return collect(s).err
		},
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if err := call(); connect.CodeOf(err) != connect.CodeNotFound {
				t.Errorf("%s: %v, want not_found", name, err)
			}
		})
	}
}

func TestListAndTags(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	req := startReq("sleep 30")
	req.Tag = ptr("my-tag")
	req.Process.Envs = map[string]string{"K": "V"}
	s, pid := started(t, t.Context(), c, req)
	defer s.Close()

	list, err := c.List(t.Context(), connect.NewRequest(&pb.ListRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	idx := slices.IndexFunc(list.Msg.GetProcesses(), func(p *pb.ProcessInfo) bool { return p.GetPid() == pid })
	if idx < 0 {
		t.Fatalf("pid %d not listed: %v", pid, list.Msg)
	}
	info := list.Msg.GetProcesses()[idx]
	if info.GetTag() != "my-tag" || info.GetConfig().GetCmd() != "/bin/sh" || info.GetConfig().GetEnvs()["K"] != "V" || info.GetConfig().GetCwd() == "" {
		t.Errorf("info = %v", info)
	}

	// Signal by tag, then the process leaves the list.
	sel := &pb.ProcessSelector{Selector: &pb.ProcessSelector_Tag{Tag: "my-tag"}}
	if _, err := c.SendSignal(t.Context(), connect.NewRequest(&pb.SendSignalRequest{Process: sel, Signal: pb.Signal_SIGNAL_SIGKILL})); err != nil {
		t.Fatal(err)
	}
	collect(s)
	list, err = c.List(t.Context(), connect.NewRequest(&pb.ListRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(list.Msg.GetProcesses(), func(p *pb.ProcessInfo) bool { return p.GetPid() == pid }) {
		t.Errorf("exited pid %d still listed", pid)
	}
}

func TestConnectReattach(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	req := startReq("sleep 0.5; echo done")
	req.Tag = ptr("reattach")
	s, pid := started(t, ctx, c, req)
	cancel() // the client goes away; the process must live on
	s.Close()

	cs, err := c.Connect(t.Context(), connect.NewRequest(&pb.ConnectRequest{Process: byPid(pid)}))
	if err != nil {
		t.Fatal(err)
	}
	r := collect(cs)
	if r.orderErr != nil || r.pid != pid || r.stdout.String() != "done\n" || r.end.GetExitCode() != 0 || r.err != nil {
		t.Fatalf("reattach: pid %d stdout %q end %v err %v order %v", r.pid, r.stdout.String(), r.end, r.err, r.orderErr)
	}

	// After the exit the end is retained, by pid and by tag.
	for _, sel := range []*pb.ProcessSelector{byPid(pid), {Selector: &pb.ProcessSelector_Tag{Tag: "reattach"}}} {
		cs, err := c.Connect(t.Context(), connect.NewRequest(&pb.ConnectRequest{Process: sel}))
		if err != nil {
			t.Fatal(err)
		}
		r := collect(cs)
		if r.orderErr != nil || r.pid != pid || r.end.GetStatus() != "exit status 0" || r.err != nil {
			t.Errorf("retained: pid %d end %v err %v", r.pid, r.end, r.err)
		}
	}
}
