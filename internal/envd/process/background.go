package process

import (
	"context"
	"io"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/log"
)

// StartBackground starts a process no client is attached to (envd's start
// command), copying its stdout and stderr to the two writers until it ends,
// and then closing those that are io.Closers (so a line-splitting writer
// can pass on a last line without a newline). It is listed and reachable by
// tag like any other process.
func (s *Service) StartBackground(ctx context.Context, u *users.User, cfg *pb.ProcessConfig, tag string, stdout, stderr io.Writer) (int, error) {
	stdin := false
	p, sub, err := s.spawn(ctx, spawnRequest{user: u, msg: &pb.StartRequest{Process: cfg, Tag: &tag, Stdin: &stdin}})
	if err != nil {
		return 0, err
	}
	go func() {
		defer sub.Close()
		for ev := range sub.C {
			d := ev.GetData()
			if d == nil {
				continue
			}
			if b := d.GetStdout(); len(b) > 0 {
				_, _ = stdout.Write(b)
			}
			if b := d.GetPty(); len(b) > 0 {
				_, _ = stdout.Write(b)
			}
			if b := d.GetStderr(); len(b) > 0 {
				_, _ = stderr.Write(b)
			}
		}
		for _, w := range []io.Writer{stdout, stderr} {
			if c, ok := w.(io.Closer); ok {
				_ = c.Close()
			}
		}
		end := p.end.GetEnd()
		// A start command that fails is what its sandbox's logs are read for.
		logf := log.G(ctx).Info
		if !end.GetExited() || end.GetExitCode() != 0 {
			logf = log.G(ctx).Warn
		}
		logf("background process ended", "tag", tag, "pid", p.pid, "status", end.GetStatus())
	}()
	return p.pid, nil
}
