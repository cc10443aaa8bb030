package oci

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/warren-sandbox/warren/internal/subreaper"
)

// TestMain reaps the runtimes' orphans as `warren serve` does, so the
// tests and benchmarks see the stop times a server has.
func TestMain(m *testing.M) {
	if os.Geteuid() == 0 {
		if err := subreaper.Start(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "reaper:", err)
			os.Exit(1)
		}
	}
	os.Exit(m.Run())
}
