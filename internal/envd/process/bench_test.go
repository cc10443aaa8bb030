package process_test

import (
	"context"
	"os/exec"
	"testing"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

// BenchmarkStartTrue is envd's share of commands.run('true'): a Start of
// /bin/true, streamed to its end, over HTTP on loopback.
func BenchmarkStartTrue(b *testing.B) {
	env := envdtest.New(b)
	client := env.ProcessClient()
	no := false
	req := &pb.StartRequest{Process: &pb.ProcessConfig{Cmd: "/bin/true"}, Stdin: &no}
	b.ResetTimer()
	for range b.N {
		stream, err := client.Start(context.Background(), connect.NewRequest(req))
		if err != nil {
			b.Fatal(err)
		}
		if r := collect(stream); r.err != nil || r.end == nil {
			b.Fatalf("stream: %v", r.err)
		}
	}
}

// BenchmarkExecTrue is the baseline for BenchmarkStartTrue: the same
// process started and waited for by os/exec, with nothing around it.
func BenchmarkExecTrue(b *testing.B) {
	for range b.N {
		if err := exec.Command("/bin/true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}
