package pgtest

import (
	"testing"
)

// TestStartSkipsWithoutServer: with no Postgres binaries and no Env, Start
// skips the test, so `go test ./...` passes on a machine without Postgres.
func TestStartSkipsWithoutServer(t *testing.T) {
	t.Setenv(Env, "")
	old := BinDir
	BinDir = t.TempDir()
	t.Cleanup(func() { BinDir = old })
	var reached bool
	t.Run("start", func(t *testing.T) {
		Start(t)
		reached = true
	})
	if reached {
		t.Fatal("Start returned without Postgres binaries; want a skip")
	}
}
