package process

import (
	"context"
	"io"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/log"
)

// StartBackground starts a process no client is attached to (envd's start
// command), copying its output to out until it ends. It is listed and
// reachable by tag like any other process.
func (s *Service) StartBackground(ctx context.Context, u *users.User, cfg *pb.ProcessConfig, tag string, out io.Writer) (int, error) {
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
			for _, b := range [][]byte{d.GetStdout(), d.GetStderr(), d.GetPty()} {
				if len(b) > 0 {
					_, _ = out.Write(b)
				}
			}
		}
		log.G(ctx).Info("background process ended", "tag", tag, "pid", p.pid, "status", p.end.GetEnd().GetStatus())
	}()
	return p.pid, nil
}
