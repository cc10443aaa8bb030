package jupyter

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"testing"
	"unicode/utf8"
)

// fuzzKey is the connection file key of the fuzzed sessions.
var fuzzKey = []byte("fuzz-key")

// zmtpBytes frames msgs as a kernel would send them on the wire.
func zmtpBytes(tb testing.TB, msgs ...[][]byte) []byte {
	tb.Helper()
	var buf bytes.Buffer
	z := &zsock{w: bufio.NewWriter(&buf)}
	for _, m := range msgs {
		if err := z.send(m); err != nil {
			tb.Fatal(err)
		}
	}
	return buf.Bytes()
}

// FuzzRecv reads arbitrary bytes as a kernel's ZMTP stream and decodes
// each message as the instance does: reading must end (the input is
// finite), never keep more than MaxMessageSize of one message, account for
// every dropped frame, and a message decoded with a key must carry that
// key's signature.
func FuzzRecv(f *testing.F) {
	s := newSession(fuzzKey)
	m, err := s.newMessage("stream", map[string]string{"name": "stdout", "text": "hi\n"})
	if err != nil {
		f.Fatal(err)
	}
	frames, err := s.encode(m)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(zmtpBytes(f, append([][]byte{[]byte("topic")}, frames...), frames))
	f.Add(zmtpBytes(f, [][]byte{delimiter, []byte("bad"), {}, {}, {}, {}}))
	f.Add([]byte{flagCommand, 4, 'P', 'I', 'N', 'G', 0, 0})
	f.Add([]byte{flagLong, 0, 0, 0, 0, 2, 0, 0, 0, 'x'}) // a 32 MiB frame, cut short
	f.Add([]byte{flagLong | flagMore, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})

	f.Fuzz(func(t *testing.T, data []byte) {
		z := &zsock{r: bufio.NewReader(bytes.NewReader(data))}
		for i := 0; ; i++ {
			if i > len(data) {
				t.Fatalf("%d messages out of %d bytes", i, len(data))
			}
			frames, dropped, err := z.recv()
			if err != nil {
				return
			}
			checkFrames(t, frames, dropped)
			m, err := s.decode(frames, dropped)
			if err != nil {
				continue
			}
			if dropped == 0 {
				at := slices.IndexFunc(frames, func(b []byte) bool { return bytes.Equal(b, delimiter) })
				if !bytes.Equal(frames[at+1], s.sign(frames[at+2:at+6])) {
					t.Fatal("a message with a wrong signature was accepted")
				}
			} else if m.Dropped != dropped {
				t.Fatalf("message reports %d bytes dropped, recv dropped %d", m.Dropped, dropped)
			}
		}
	})
}

func checkFrames(t *testing.T, frames [][]byte, dropped uint64) {
	t.Helper()
	var kept int
	var lost bool
	for _, fr := range frames {
		kept += len(fr)
		lost = lost || fr == nil
	}
	if kept > MaxMessageSize {
		t.Fatalf("%d bytes kept of one message, over %d", kept, MaxMessageSize)
	}
	if lost != (dropped > 0) {
		t.Fatalf("dropped %d bytes but nil frames: %v", dropped, lost)
	}
}

// FuzzMessageRoundTrip sends arbitrary messages through encode, the ZMTP
// framing and decode: what arrives is what was sent.
func FuzzMessageRoundTrip(f *testing.F) {
	f.Add("execute_request", []byte(`{"code":"print(1)"}`), []byte(`{}`), []byte("buf"), []byte("kernel.1.iopub"))
	f.Add("", []byte(``), []byte(`{"msg_id":"x"}`), []byte(nil), []byte(nil))
	f.Add("display_data", bytes.Repeat([]byte(`"x"`), 200), []byte(`null`), make([]byte, 300), []byte("<IDS|MSG>"))

	f.Fuzz(func(t *testing.T, msgType string, content, parent, buffer, identity []byte) {
		if !json.Valid(content) || !json.Valid(parent) || !utf8.ValidString(msgType) {
			return // the kernel only sends JSON; raw frames are FuzzRecv's
		}
		s := newSession(fuzzKey)
		m, err := s.newMessage(msgType, json.RawMessage(content))
		if err != nil {
			return // content json.Marshal refuses (it compacts what it keeps)
		}
		m.ParentHeader = parent
		if buffer != nil {
			m.Buffers = [][]byte{buffer}
		}
		frames, err := s.encode(m)
		if err != nil {
			t.Fatalf("encode: %v", err)
		}
		if identity != nil && !bytes.Equal(identity, delimiter) {
			frames = append([][]byte{identity}, frames...)
		}
		z := &zsock{r: bufio.NewReader(bytes.NewReader(zmtpBytes(t, frames)))}
		got, dropped, err := z.recv()
		if err != nil || dropped != 0 {
			t.Fatalf("recv: %v (dropped %d)", err, dropped)
		}
		if _, _, err := z.recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("after the message: %v, want EOF", err)
		}
		back, err := s.decode(got, 0)
		if err != nil {
			t.Fatalf("decode: %v", err)
		}
		if back.Header.MsgID != m.Header.MsgID || back.Type() != msgType || !back.Header.Date.Equal(m.Header.Date) {
			t.Fatalf("header %+v, sent %+v", back.Header, m.Header)
		}
		if !bytes.Equal(back.Content, m.Content) || !bytes.Equal(back.ParentHeader, orEmpty(parent)) {
			t.Fatalf("content %q parent %q, sent %q %q", back.Content, back.ParentHeader, m.Content, parent)
		}
		if len(back.Buffers) != len(m.Buffers) || (buffer != nil && !bytes.Equal(back.Buffers[0], buffer)) {
			t.Fatalf("buffers %q, sent %q", back.Buffers, m.Buffers)
		}
	})
}
