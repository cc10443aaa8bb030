package process

import (
	"os"
	"testing"
	"time"
)

// TestPendingOutputOutlivesTheDeadline: a pipe whose read deadline passed
// before anyone read it still reports the bytes in it, which the pump
// then reads instead of dropping them (a busy machine can run the pump
// later than the drain deadline set when the process exited).
func TestPendingOutputOutlivesTheDeadline(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if pending(r) {
		t.Fatal("an empty pipe has pending bytes")
	}
	if _, err := w.Write([]byte("last line\n")); err != nil {
		t.Fatal(err)
	}
	_ = r.SetReadDeadline(time.Now().Add(-time.Second))
	if _, err := r.Read(make([]byte, 64)); !os.IsTimeout(err) {
		t.Fatalf("read past the deadline: %v, want a timeout", err)
	}
	if !pending(r) {
		t.Fatal("the written line is not reported as pending")
	}
	p := &proc{}
	p.exitedAt.Store(time.Now().UnixNano())
	if !p.drainLeft() {
		t.Fatal("no drain left right after the exit")
	}
	p.extendDrain(r)
	buf := make([]byte, 64)
	if n, err := r.Read(buf); err != nil || string(buf[:n]) != "last line\n" {
		t.Fatalf("after extending the drain: %q, %v", buf[:n], err)
	}
}
