package buildrun

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
	"github.com/warren-sandbox/warren/internal/lifecycle"
	"github.com/warren-sandbox/warren/internal/template/builder"
)

// envd runs every command by answering its output and exit code.
type envd struct {
	processconnect.UnimplementedProcessHandler
	out  string
	code int32
}

func (e *envd) Start(_ context.Context, _ *connect.Request[pb.StartRequest], s *connect.ServerStream[pb.StartResponse]) error {
	_ = s.Send(&pb.StartResponse{Event: &pb.ProcessEvent{Event: &pb.ProcessEvent_Data{Data: &pb.ProcessEvent_DataEvent{
		Output: &pb.ProcessEvent_DataEvent_Stdout{Stdout: []byte(e.out)}}}}})
	return s.Send(&pb.StartResponse{Event: &pb.ProcessEvent{Event: &pb.ProcessEvent_End{End: &pb.ProcessEvent_EndEvent{
		ExitCode: e.code, Exited: true}}}})
}

// box records what the runner did with its build sandbox.
type box struct {
	base      string
	keepErr   error
	calls     []string
	keptAt    string
	destroyed bool
}

func (b *box) Envd() (string, *http.Client) { return b.base, http.DefaultClient }

func (b *box) KeepLayer(_ context.Context, dir string) error {
	b.calls, b.keptAt = append(b.calls, "keep"), dir
	return b.keepErr
}

func (b *box) Destroy(context.Context) { b.calls, b.destroyed = append(b.calls, "destroy"), true }

// machine hands out one box, or fails to start it.
type machine struct {
	b        *box
	startErr error
	spec     lifecycle.BuildSpec
}

func (m *machine) StartBuildSandbox(_ context.Context, s lifecycle.BuildSpec) (Box, error) {
	m.spec = s
	if m.startErr != nil {
		return nil, m.startErr
	}
	return m.b, nil
}

func TestRunBuildStep(t *testing.T) {
	t.Parallel()
	errStart, errKeep := errors.New("no room"), errors.New("disk full")
	tests := []struct {
		name      string
		code      int32
		startErr  error
		keepErr   error
		wantCode  int
		wantErr   error
		wantCalls []string
	}{
		{name: "success keeps the layer", wantCalls: []string{"keep", "destroy"}},
		{name: "a failing command keeps nothing", code: 2, wantCode: 2, wantCalls: []string{"destroy"}},
		{name: "a layer that cannot be kept", keepErr: errKeep, wantErr: errKeep, wantCalls: []string{"keep", "destroy"}},
		{name: "no sandbox", startErr: errStart, wantErr: errStart},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path, h := processconnect.NewProcessHandler(&envd{out: "step output\n", code: tc.code})
			mux := http.NewServeMux()
			mux.Handle(path, h)
			srv := httptest.NewServer(mux)
			t.Cleanup(srv.Close)
			b := &box{base: srv.URL, keepErr: tc.keepErr}
			m := &machine{b: b, startErr: tc.startErr}
			var out bytes.Buffer
			step := builder.RunStep{Layers: []string{"/l1", "/l0"}, Command: "make", CPUCount: 2, MemoryMB: 512,
				AllowInternet: true, Output: &out, LayerDir: "/layers/new"}
			code, err := Runner{M: m}.RunBuildStep(context.Background(), step)
			if code != tc.wantCode || !errors.Is(err, tc.wantErr) {
				t.Fatalf("RunBuildStep = %d, %v; want %d, %v", code, err, tc.wantCode, tc.wantErr)
			}
			if !slices.Equal(b.calls, tc.wantCalls) {
				t.Errorf("box calls %v, want %v", b.calls, tc.wantCalls)
			}
			if tc.startErr != nil {
				return
			}
			if out.String() != "step output\n" {
				t.Errorf("output %q", out.String())
			}
			if b.keptAt != "" && b.keptAt != step.LayerDir {
				t.Errorf("layer kept at %q, want %q", b.keptAt, step.LayerDir)
			}
			if s := m.spec; !slices.Equal(s.Layers, step.Layers) || s.CPUCount != 2 || s.MemoryMB != 512 || !s.AllowInternet {
				t.Errorf("build sandbox spec %+v does not match the step", s)
			}
		})
	}
}
