package interpreter

import (
	"io"
	"log/slog"
	"os"
	"testing"
)

// TestMain silences the server's logs; the tests check behaviour, and the
// expected warnings (interrupts, dead kernels) would bury real failures.
func TestMain(m *testing.M) {
	slog.SetDefault(slog.New(slog.NewTextHandler(io.Discard, nil)))
	os.Exit(m.Run())
}
