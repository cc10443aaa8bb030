package selftest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/pkg/warren"
)

// probeMemoryBomb forks processes that each take 8 MiB, all at once. On
// runc the kernel's OOM killer ends some of them inside the sandbox. Under
// gVisor, envd's OOM guard is a process like the bomb's and may not get the
// CPU in time; the host then kills the whole sandbox. Either outcome holds
// as long as the blast stays inside: the neighbour and warren go on, the
// command ends promptly (success or error, never a hang), and a sandbox
// that died is gone from the API rather than listed as running.
func probeMemoryBomb(ctx context.Context, e *Env) error {
	s, err := e.C.Create(ctx, e.Template, nil)
	if err != nil {
		return err
	}
	defer s.Kill(context.WithoutCancel(ctx))
	// envd must not be the kernel's first choice when memory runs out.
	scores, err := must(ctx, s, "user", "cat /proc/1/oom_score_adj /proc/self/oom_score_adj")
	if err != nil {
		return err
	}
	if f := strings.Fields(scores); len(f) != 2 || f[1] != "500" || atoi(f[0]) > atoi(f[1]) {
		return fmt.Errorf("oom_score_adj of envd and of a command: %q; want the command's 500 and envd's at most that", scores)
	}
	start := time.Now()
	_, runErr := s.Run(ctx, "user", `timeout 8 python3 -c '
import os
kept = []
while True:
    try:
        if os.fork() == 0:
            kept.append(bytearray(8 << 20))
    except OSError:
        pass
' >/dev/null 2>&1; echo done`)
	if d := time.Since(start); d > 30*time.Second {
		return fmt.Errorf("the command took %v to end (%v)", d, runErr)
	}
	if _, err := must(ctx, e.B, "user", "echo neighbour alive"); err != nil {
		return fmt.Errorf("the neighbour did not survive the memory bomb: %w", err)
	}
	sdk, _ := e.C.client()
	if _, _, err := sdk.List(ctx, warren.ListOptions{Limit: 1}); err != nil {
		return fmt.Errorf("warren did not survive the memory bomb: %w", err)
	}
	// The bomb's orphans may hold the user's process limit for a while;
	// root checks that the sandbox answers. A sandbox that died is removed
	// as soon as warren notices, which may take a moment.
	for end := time.Now().Add(15 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		if _, err := must(ctx, s, "root", "echo alive"); err == nil {
			return nil
		}
		_, err := sdk.GetInfo(ctx, s.ID)
		if errors.Is(err, warren.ErrNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("asking for the dead sandbox: %w", err)
		}
		if time.Now().After(end) {
			return fmt.Errorf("the sandbox neither answers nor is reported gone (command: %v)", runErr)
		}
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}
