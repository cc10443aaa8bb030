package e2e

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/selftest"
)

// knownGaps are probes that escape on a backend today, with the reason;
// they are skipped (and reported by `warren selftest isolation`) until
// fixed, rather than dropped.
var knownGaps = map[string]string{}

// TestIsolation runs the escape suite of `warren selftest isolation`
// against a real server on each backend, one named test per probe.
func TestIsolation(t *testing.T) {
	cfg := loadConfig(t)
	first := 70
	if os.Getenv("WARREN_E2E_INDEX") != "" {
		first = cfg.firstIndex // a run that picked its indexes keeps to them
	}
	for i, rt := range cfg.runtimes {
		t.Run(rt, func(t *testing.T) {
			s := launchServer(t, cfg, serverOpts{index: first + i, runtime: rt})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			c := &selftest.Client{URL: s.url, APIKey: s.apiKey, HTTP: &http.Client{}}
			env, cleanup, err := selftest.Setup(ctx, c, "base")
			if err != nil {
				t.Fatal(err)
			}
			defer cleanup()
			for _, p := range selftest.Probes {
				t.Run(p.Name, func(t *testing.T) {
					if why, ok := knownGaps[rt+"/"+p.Name]; ok {
						t.Skip("known gap: " + why)
					}
					if err := p.Run(ctx, env); err != nil {
						t.Fatalf("%s: %v", p.Why, err)
					}
				})
			}
			if t.Failed() {
				t.Log(strings.Repeat("-", 20) + " server log tail:\n" + s.logTail(40))
			}
		})
	}
}
