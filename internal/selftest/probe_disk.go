package selftest

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// maxProbedDisk is the most free space the disk probe accepts in a fresh
// sandbox: more suggests the sandbox writes to the host's disk (a server
// run with --disk-quota=false), which the probe then reports rather than
// fills.
const maxProbedDisk = 64 << 30

// probeDisk fills a fresh sandbox's disk with fallocate (no data written,
// so it is quick): asking for more than is free fails with ENOSPC, an
// upload into the last megabyte gets envd's 507, and after removing the
// file the sandbox writes again.
func probeDisk(ctx context.Context, e *Env) error {
	s, err := e.C.Create(ctx, e.Template, nil)
	if err != nil {
		return err
	}
	defer s.Kill(context.WithoutCancel(ctx))
	out, err := must(ctx, s, "user", "df -B1 --output=avail /home/user | tail -1")
	if err != nil {
		return err
	}
	avail, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return fmt.Errorf("free space in the sandbox: %q", out)
	}
	if avail > maxProbedDisk {
		return fmt.Errorf("%d GiB free in a fresh sandbox: no per-sandbox disk limit (is --disk-quota off?)", avail>>30)
	}
	over := fmt.Sprintf("fallocate -l %d /home/user/over 2>&1; rc=$?; rm -f /home/user/over; exit $rc", avail+64<<20)
	r, err := s.Run(ctx, "user", over)
	if err != nil {
		return err
	}
	if r.ExitCode == 0 || !strings.Contains(r.Stdout, "No space left") {
		return fmt.Errorf("allocating %d MiB more than is free: %s", 64, r)
	}
	// Fill all but about a megabyte, then upload four.
	fill := "fallocate -l $(( $(df -B1 --output=avail /home/user | tail -1) - (1 << 20) )) /home/user/fill"
	if _, err := must(ctx, s, "user", fill); err != nil {
		return err
	}
	code, body, err := s.Upload(ctx, "/home/user/upload.bin", strings.Repeat("x", 4<<20))
	if err != nil {
		return err
	}
	if code != http.StatusInsufficientStorage || !strings.Contains(body, "no space left") {
		return fmt.Errorf("an upload past a full disk got %d %s; want 507", code, body)
	}
	if _, err := must(ctx, s, "user", "rm -f /home/user/fill /home/user/upload.bin && echo ok > /home/user/after && cat /home/user/after"); err != nil {
		return fmt.Errorf("the sandbox did not recover after its disk filled: %w", err)
	}
	return nil
}
