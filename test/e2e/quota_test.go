package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
)

// TestDiskQuota: a sandbox's writable layer is a disk of --default-disk
// MB of its own. Filling it gives ENOSPC inside and 507 on an upload; the
// sandbox goes on once space is freed; killing it leaves no mount or loop
// device behind.
func TestDiskQuota(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			s := launchServer(t, cfg, serverOpts{index: 84 + i, runtime: rt, args: []string{"--default-disk=64"}})
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{}}
			sb, err := c.Create(ctx, "base", nil)
			if err != nil {
				t.Fatal(err)
			}
			run := func(script string) string {
				r, err := sb.Run(ctx, "user", script)
				if err != nil {
					t.Fatal(err)
				}
				return r.Stdout + r.Stderr
			}
			if out := run("head -c 100M /dev/zero > /home/user/big; echo exit=$?"); !strings.Contains(out, "No space left") || !strings.Contains(out, "exit=1") {
				t.Fatalf("writing 100 MiB into a 64 MiB disk: %q", out)
			}
			status, body, err := sb.Upload(ctx, "/home/user/upload", strings.Repeat("x", 80<<20))
			if err != nil || status != http.StatusInsufficientStorage || !strings.Contains(body, "no space left") {
				t.Fatalf("upload past the disk = %d %s %v; want 507", status, body, err)
			}
			if out := run("rm -f /home/user/big /home/user/upload; echo fine > /home/user/f && cat /home/user/f"); !strings.Contains(out, "fine") {
				t.Fatalf("after freeing space: %q", out)
			}
			sb.Kill(ctx)
			deadline := time.Now().Add(10 * time.Second)
			for {
				m, _ := mountPointsUnder(s.dataDir)
				loops, _ := exec.Command("losetup", "-a").Output()
				if len(m) == 0 && !bytes.Contains(loops, []byte(s.dataDir)) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal(fmt.Sprintf("left after kill: mounts %v, loops %s", m, loops))
				}
				time.Sleep(200 * time.Millisecond)
			}
		})
	}
}
