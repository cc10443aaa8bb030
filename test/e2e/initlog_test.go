package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/runtime/oci"
	"github.com/warren-sandbox/warren/internal/selftest"
	"github.com/warren-sandbox/warren/internal/testutil"
)

// TestInitLogCapped: root in a sandbox writes 48 MiB to its init's
// stdout, which the host keeps as init.log outside the sandbox's disk;
// within seconds the file is back under oci.InitLogMax, the logs endpoint
// still answers and the sandbox still runs commands.
func TestInitLogCapped(t *testing.T) {
	cfg := loadConfig(t)
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			// About the log, not admission: a busy host must not refuse
			// the one create.
			s := launchServer(t, cfg, serverOpts{index: 230 + i, runtime: rt})
			c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{}}
			ctx := t.Context()
			sb, err := c.Create(ctx, "base", nil)
			if err != nil {
				t.Fatal(err)
			}
			defer sb.Kill(ctx)
			const flood = `head -c 48M /dev/zero | tr '\0' x | fold -w 1023 > /proc/1/fd/1`
			if res, err := sb.Run(ctx, "root", flood); err != nil || res.ExitCode != 0 {
				t.Fatalf("flooding the init's stdout: %+v, %v", res, err)
			}
			path := filepath.Join(s.dataDir, "sandboxes", rt, sb.ID, "init.log")
			start := time.Now()
			var size int64
			err = testutil.Poll(15*time.Second, 200*time.Millisecond, func() error {
				fi, err := os.Stat(path)
				if err != nil {
					return err
				}
				if size = fi.Size(); size > oci.InitLogMax {
					return fmt.Errorf("init.log is %d bytes, over %d", size, oci.InitLogMax)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if size < 1<<20 {
				t.Fatalf("init.log is %d bytes: the flood never reached it", size)
			}
			t.Logf("init.log at %d bytes %v after the flood", size, time.Since(start).Round(time.Millisecond))
			if st, body := s.call(t, "GET", "/v2/sandboxes/"+sb.ID+"/logs?limit=5", ""); st != 200 {
				t.Errorf("logs after the cut: %d %s", st, body)
			}
			if res, err := sb.Run(ctx, "user", "echo ok"); err != nil || res.Stdout != "ok\n" {
				t.Errorf("a command after the cut: %+v, %v", res, err)
			}
		})
	}
}
