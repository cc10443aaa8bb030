package jupyter

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// protocolVersion is the Jupyter messaging protocol version we speak.
const protocolVersion = "5.3"

// delimiter separates routing identities from the signed message.
var delimiter = []byte("<IDS|MSG>")

// session signs and verifies messages with the connection file's key and
// stamps outgoing headers with one session id.
type session struct {
	key []byte // HMAC-SHA256 key; empty disables signing, as the protocol allows
	id  string
}

func newSession(key []byte) *session {
	return &session{key: key, id: newID()}
}

// newID returns a random 128-bit hex id for sessions and messages.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}

// newMessage builds a request of msgType with the given content.
func (s *session) newMessage(msgType string, content any) (*Message, error) {
	c, err := json.Marshal(content)
	if err != nil {
		return nil, fmt.Errorf("encoding %s content: %w", msgType, err)
	}
	return &Message{
		Header: Header{
			MsgID: newID(), Session: s.id, Username: "warren",
			Date: time.Now().UTC(), MsgType: msgType, Version: protocolVersion,
		},
		ParentHeader: json.RawMessage("{}"),
		Metadata:     json.RawMessage("{}"),
		Content:      c,
	}, nil
}

// sign returns the hex HMAC of the four signed frames.
func (s *session) sign(parts [][]byte) []byte {
	if len(s.key) == 0 {
		return nil
	}
	mac := hmac.New(sha256.New, s.key)
	for _, p := range parts {
		mac.Write(p)
	}
	sum := mac.Sum(nil)
	out := make([]byte, hex.EncodedLen(len(sum)))
	hex.Encode(out, sum)
	return out
}

// encode turns m into wire frames (no identities: a DEALER needs none).
func (s *session) encode(m *Message) ([][]byte, error) {
	h, err := json.Marshal(m.Header)
	if err != nil {
		return nil, fmt.Errorf("encoding header: %w", err)
	}
	parts := [][]byte{h, orEmpty(m.ParentHeader), orEmpty(m.Metadata), orEmpty(m.Content)}
	frames := make([][]byte, 0, 6+len(m.Buffers))
	frames = append(frames, delimiter, s.sign(parts))
	frames = append(frames, parts...)
	return append(frames, m.Buffers...), nil
}

func orEmpty(b json.RawMessage) []byte {
	if len(b) == 0 {
		return []byte("{}")
	}
	return b
}

var errBadSignature = errors.New("invalid message signature")

// decode parses wire frames, skipping identities (iopub topics, routing ids),
// and verifies the signature. dropped is the size of frames recv did not
// keep (nil entries): such a message cannot be verified, only reported, so
// its content becomes empty and Message.Dropped says how much was lost.
// Skipping the check is safe because the kernel is a child of ours in the
// same sandbox, reached over loopback sockets we dialled.
func (s *session) decode(frames [][]byte, dropped uint64) (*Message, error) {
	i := 0
	for i < len(frames) && !bytes.Equal(frames[i], delimiter) {
		i++
	}
	if len(frames)-i < 6 {
		return nil, fmt.Errorf("malformed message: %d frames, delimiter at %d", len(frames), i)
	}
	sig, parts := frames[i+1], frames[i+2:i+6]
	if dropped > 0 {
		if parts[0] == nil || parts[1] == nil {
			return nil, fmt.Errorf("message header of over %d bytes", MaxMessageSize)
		}
		parts = [][]byte{parts[0], parts[1], orEmpty(parts[2]), orEmpty(parts[3])}
	} else if len(s.key) > 0 && !hmac.Equal(sig, s.sign(parts)) {
		return nil, errBadSignature
	}
	m := &Message{
		ParentHeader: json.RawMessage(parts[1]),
		Metadata:     json.RawMessage(parts[2]),
		Content:      json.RawMessage(parts[3]),
	}
	if err := json.Unmarshal(parts[0], &m.Header); err != nil {
		return nil, fmt.Errorf("decoding header: %w", err)
	}
	if len(frames) > i+6 {
		m.Buffers = frames[i+6:]
	}
	m.Dropped = dropped
	return m, nil
}
