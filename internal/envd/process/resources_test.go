package process_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"connectrpc.com/connect"

	pb "github.com/warren-sandbox/warren/api/gen/process"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

// TestNoGoroutineLeak checks that a finished stream, a canceled one and a
// re-attach leave no goroutine behind. Not parallel: it counts goroutines.
func TestNoGoroutineLeak(t *testing.T) {
	e, c := newEnv(t)
	run(t, c, startReq("true")) // warm up everything lazily started
	e.Client.CloseIdleConnections()
	time.Sleep(100 * time.Millisecond)
	check := envdtest.NoGoroutineLeak(t)

	run(t, c, startReq("echo a; echo b >&2"))
	ctx, cancel := context.WithCancel(t.Context())
	s, pid := started(t, ctx, c, startReq("sleep 0.3; echo late"))
	cancel()
	s.Close()
	cs, err := c.Connect(t.Context(), connect.NewRequest(&pb.ConnectRequest{Process: byPid(pid)}))
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(cs); r.stdout.String() != "late\n" {
		t.Errorf("reattached stdout = %q", r.stdout.String())
	}
	e.Client.CloseIdleConnections()
	check()
}

// TestOutputMemoryBounded stalls a client while the process writes far
// more than the bound: the writer must block instead of envd's heap growing.
// Once the client leaves, output with no subscriber is dropped and the
// writer runs to its end. The data is random because Connect-go compresses
// responses for Go clients and zeros would fit in the socket buffers. Not
// parallel: it measures the heap.
func TestOutputMemoryBounded(t *testing.T) {
	_, c := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	s, pid := started(t, ctx, c, startReq("head -c 67108864 /dev/urandom"))

	before := heap()
	time.Sleep(1500 * time.Millisecond) // the client reads nothing meanwhile
	if grown := int64(heap()) - int64(before); grown > 48<<20 {
		t.Errorf("heap grew by %d MiB while a client stalled", grown>>20)
	}
	running := func() bool {
		list, err := c.List(t.Context(), connect.NewRequest(&pb.ListRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		return len(list.Msg.GetProcesses()) == 1
	}
	if !running() {
		t.Fatal("the writer should be blocked, still running")
	}

	cancel()
	s.Close()
	envdtest.Eventually(t, 20*time.Second, func() bool { return !running() }, "writer still blocked after its client left")
	cs, err := c.Connect(t.Context(), connect.NewRequest(&pb.ConnectRequest{Process: byPid(pid)}))
	if err != nil {
		t.Fatal(err)
	}
	if r := collect(cs); r.end.GetExitCode() != 0 || r.err != nil {
		t.Errorf("end = %v, err %v", r.end, r.err)
	}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
