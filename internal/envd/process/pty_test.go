package process_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
)

func TestPTY(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	req := &pb.StartRequest{
		Process: &pb.ProcessConfig{Cmd: "/bin/sh", Envs: map[string]string{"PS1": "$ ", "TERM": "dumb"}},
		Pty:     &pb.PTY{Size: &pb.PTY_Size{Cols: 100, Rows: 40}},
	}
	s, pid := started(t, t.Context(), c, req)
	input := func(text string) {
		t.Helper()
		in := &pb.ProcessInput{Input: &pb.ProcessInput_Pty{Pty: []byte(text)}}
		if _, err := c.SendInput(t.Context(), connect.NewRequest(&pb.SendInputRequest{Process: byPid(pid), Input: in})); err != nil {
			t.Fatalf("SendInput: %v", err)
		}
	}
	var out bytes.Buffer
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(out.String(), want) {
			if time.Now().After(deadline) || !s.Receive() {
				t.Fatalf("never saw %q in %q (%v)", want, out.String(), s.Err())
			}
			d := s.Msg().GetEvent().GetData()
			if len(d.GetStdout()) > 0 || len(d.GetStderr()) > 0 {
				t.Fatalf("PTY output must arrive as data.pty, got %v", d)
			}
			out.Write(d.GetPty())
		}
	}

	input("stty size\n")
	waitFor("40 100")

	resize := &pb.UpdateRequest{Process: byPid(pid), Pty: &pb.PTY{Size: &pb.PTY_Size{Cols: 120, Rows: 50}}}
	if _, err := c.Update(t.Context(), connect.NewRequest(resize)); err != nil {
		t.Fatalf("Update: %v", err)
	}
	input("stty size\n")
	waitFor("50 120")

	// CloseStdin is refused for a PTY; ^D is the way.
	if _, err := c.CloseStdin(t.Context(), connect.NewRequest(&pb.CloseStdinRequest{Process: byPid(pid)})); connect.CodeOf(err) != connect.CodeInvalidArgument {
		t.Errorf("CloseStdin on PTY: %v", err)
	}
	input("exit 5\n")
	r := collect(s)
	if r.end.GetExitCode() != 5 {
		t.Errorf("end = %v, err %v", r.end, r.err)
	}
}

func TestUpdateWithoutPTY(t *testing.T) {
	t.Parallel()
	_, c := newEnv(t)
	s, pid := started(t, t.Context(), c, startReq("sleep 30"))
	defer s.Close()
	defer kill(t, c, pid)
	resize := &pb.UpdateRequest{Process: byPid(pid), Pty: &pb.PTY{Size: &pb.PTY_Size{Cols: 1, Rows: 1}}}
	if _, err := c.Update(t.Context(), connect.NewRequest(resize)); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("Update without PTY: %v", err)
	}
}
