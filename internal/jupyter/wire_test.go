package jupyter

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

func TestSessionRoundTrip(t *testing.T) {
	t.Parallel()
	s := newSession([]byte("secret"))
	m, err := s.newMessage("execute_request", map[string]string{"code": "1"})
	if err != nil {
		t.Fatal(err)
	}
	frames, err := s.encode(m)
	if err != nil {
		t.Fatal(err)
	}
	// Receivers see routing identities or a topic before the delimiter.
	frames = append([][]byte{[]byte("kernel.x.status")}, frames...)
	got, err := s.decode(frames, 0)
	if err != nil || got.Header.MsgID != m.Header.MsgID || got.Type() != "execute_request" {
		t.Fatalf("decode: %+v, %v", got, err)
	}
	tests := []struct {
		name   string
		mutate func([][]byte) [][]byte
	}{
		{"tampered content", func(f [][]byte) [][]byte { f[6] = []byte(`{"code":"2"}`); return f }},
		{"wrong key", func(f [][]byte) [][]byte { f[2] = newSession([]byte("other")).sign(f[3:7]); return f }},
		{"missing frames", func(f [][]byte) [][]byte { return f[:4] }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.mutate(append([][]byte(nil), frames...))
			if _, err := s.decode(bad, 0); err == nil {
				t.Fatal("decode accepted an invalid message")
			}
		})
	}
}

func TestDecodeDropped(t *testing.T) {
	t.Parallel()
	s := newSession([]byte("secret"))
	header := []byte(`{"msg_id":"a","msg_type":"stream"}`)
	parent := []byte(`{"msg_id":"p"}`)
	// The signature cannot match a message with a dropped frame; the message
	// is kept (to report the drop), with empty content.
	m, err := s.decode([][]byte{delimiter, []byte("sig"), header, parent, {}, nil}, 1<<30)
	if err != nil || m.Dropped != 1<<30 || string(m.Content) != "{}" || m.ParentID() != "p" {
		t.Fatalf("decode: %+v, %v", m, err)
	}
	if _, err := s.decode([][]byte{delimiter, []byte("sig"), nil, parent, {}, {}}, 1<<30); err == nil {
		t.Fatal("decode accepted a message without its header")
	}
	if _, err := s.decode([][]byte{delimiter, []byte("sig"), header, parent, {}, []byte("{}")}, 0); !errors.Is(err, errBadSignature) {
		t.Fatalf("a bad signature without a drop: %v", err)
	}
}

func TestParentIDAndLooseDate(t *testing.T) {
	t.Parallel()
	s := newSession(nil)
	frames := [][]byte{delimiter, nil,
		[]byte(`{"msg_id":"a","msg_type":"status","date":"not a date"}`),
		[]byte(`{"msg_id":"p"}`), []byte(`{}`), []byte(`{"execution_state":"idle"}`)}
	m, err := s.decode(frames, 0)
	if err != nil || m.ParentID() != "p" || !isIdle(m) || !m.Header.Date.IsZero() {
		t.Fatalf("decode: %+v, %v", m, err)
	}
}

// fakePeer plays a ZMTP 3.0 server on an accepted connection.
func fakePeer(t *testing.T, c net.Conn, then func(c net.Conn)) {
	t.Helper()
	go func() {
		defer c.Close()
		buf := make([]byte, 64)
		if _, err := io.ReadFull(c, buf); err != nil {
			return
		}
		g := greeting()
		g[32] = 1 // as-server
		_, _ = c.Write(g)
		ready := readyCommand("ROUTER")
		_, _ = c.Write(append([]byte{flagCommand, byte(len(ready))}, ready...))
		then(c)
	}()
}

func TestZMTPFrames(t *testing.T) {
	t.Parallel()
	// TCP, not net.Pipe: both sides write before reading, which needs buffering.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("x"), 300) // a long frame
	fakePeer(t, server, func(c net.Conn) {
		buf := make([]byte, 2+len(readyCommand("DEALER")))
		_, _ = io.ReadFull(c, buf) // our READY
		var w bytes.Buffer
		w.Write([]byte{flagCommand, 4, 4, 'P', 'I', 'N'}) // a command between messages
		w.Write([]byte{flagMore, 1, 'a'})
		w.Write([]byte{flagLong, 0, 0, 0, 0, 0, 0, 1, 44})
		w.Write(big)
		w.Write([]byte{0, 1, 'z'})
		// A message whose second frame is over the limit: read, not kept.
		w.Write([]byte{flagMore, 1, 'h'})
		var size [8]byte
		binary.BigEndian.PutUint64(size[:], MaxMessageSize+1)
		w.Write(append([]byte{flagLong | flagMore}, size[:]...))
		w.Write(make([]byte, MaxMessageSize+1))
		w.Write([]byte{0, 1, 'y'})
		_, _ = c.Write(w.Bytes())
	})
	z := &zsock{conn: client}
	z.r, z.w = newBufs(client)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := z.handshake(ctx, "DEALER"); err != nil {
		t.Fatalf("handshake: %v", err)
	}
	frames, dropped, err := z.recv()
	if err != nil || dropped != 0 || len(frames) != 2 || string(frames[0]) != "a" || !bytes.Equal(frames[1], big) {
		t.Fatalf("first message: %q, %d, %v", frames, dropped, err)
	}
	frames, _, err = z.recv()
	if err != nil || len(frames) != 1 || string(frames[0]) != "z" {
		t.Fatalf("second message: %q, %v", frames, err)
	}
	frames, dropped, err = z.recv()
	if err != nil || dropped != MaxMessageSize+1 || len(frames) != 3 || string(frames[0]) != "h" || frames[1] != nil || string(frames[2]) != "y" {
		t.Fatalf("message with a dropped frame: %d frames, %d dropped, %v", len(frames), dropped, err)
	}
	if _, _, err := z.recv(); err == nil {
		t.Fatal("recv after peer closed succeeded")
	}
}

func TestFifoOrderAndCancel(t *testing.T) {
	t.Parallel()
	var f fifo
	if err := f.lock(t.Context()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	gaveUp := make(chan error)
	go func() { gaveUp <- f.lock(ctx) }()
	got := make(chan int, 3)
	for i := range 3 {
		go func() {
			_ = f.lock(t.Context())
			got <- i
			f.unlock()
		}()
		time.Sleep(20 * time.Millisecond) // fixes the arrival order
	}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled waiter: %v", err)
	}
	f.unlock()
	for want := range 3 {
		if i := <-got; i != want {
			t.Fatalf("granted %d, want %d", i, want)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tb := &tailBuffer{max: 4}
	for _, s := range []string{"ab", "cde", "fghijk", "l"} {
		_, _ = tb.Write([]byte(s))
	}
	if got := tb.String(); got != "ijkl" {
		t.Fatalf("tail %q, want ijkl", got)
	}
}
