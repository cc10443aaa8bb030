package jupyter

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// This file is a minimal ZMTP 3.0 client (RFC 23, NULL mechanism): enough to
// connect DEALER and SUB sockets to a kernel's ROUTER and PUB sockets. A
// general ZMQ library would bring reconnection, queues and goroutines we
// neither need nor can bound; one TCP connection per channel, owned by the
// instance, keeps memory and lifetime explicit.

const (
	flagMore    = 0x01
	flagLong    = 0x02
	flagCommand = 0x04

	// MaxMessageSize bounds the frames kept of one received message. The
	// frames past it (in practice the content of a print of a 100 MB
	// string, which ipykernel sends as one message) are read off the wire
	// and dropped, so one huge output cannot exhaust the memory of a
	// sandbox or break the channel; the header survives, so the drop can
	// be reported to the right request.
	MaxMessageSize = 32 << 20
	// maxCommandSize bounds a command frame (READY, ERROR...).
	maxCommandSize = 64 << 10
)

// errTooLarge reports a frame over the limit of a handshake read.
var errTooLarge = errors.New("frame exceeds size limit")

// zsock is one ZMTP connection.
type zsock struct {
	conn net.Conn
	r    *bufio.Reader // used only by the channel's single reader goroutine

	wmu sync.Mutex // wmu serialises writes so the frames of a message stay together; guards w
	w   *bufio.Writer
}

// dialZMTP connects to addr and performs the greeting and NULL handshake
// announcing socketType ("DEALER", "SUB").
func dialZMTP(ctx context.Context, addr, socketType string) (*zsock, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	z := &zsock{conn: c}
	z.r, z.w = newBufs(c)
	if err := z.handshake(ctx, socketType); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("zmtp handshake with %s: %w", addr, err)
	}
	return z, nil
}

func newBufs(c net.Conn) (*bufio.Reader, *bufio.Writer) {
	return bufio.NewReaderSize(c, 64<<10), bufio.NewWriterSize(c, 16<<10)
}

// greeting is our 64-byte ZMTP greeting: version 3.0, NULL, client. We
// announce 3.0 rather than 3.1 so that subscriptions are plain messages and
// the peer sends no PING commands.
func greeting() []byte {
	g := make([]byte, 64)
	g[0], g[8], g[9] = 0xff, 0x01, 0x7f
	g[10], g[11] = 3, 0
	copy(g[12:32], "NULL")
	return g
}

func (z *zsock) handshake(ctx context.Context, socketType string) error {
	deadline := time.Now().Add(5 * time.Second)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	_ = z.conn.SetDeadline(deadline)
	// A cancelled ctx must not leave us blocked in the handshake.
	stop := context.AfterFunc(ctx, func() { _ = z.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	defer func() { _ = z.conn.SetDeadline(time.Time{}) }()

	if _, err := z.conn.Write(greeting()); err != nil {
		return fmt.Errorf("sending greeting: %w", err)
	}
	var peer [64]byte
	if _, err := io.ReadFull(z.r, peer[:]); err != nil {
		return fmt.Errorf("reading greeting: %w", err)
	}
	if peer[0] != 0xff || peer[9]&0x01 != 0x01 || peer[10] < 3 {
		return errors.New("peer does not speak ZMTP 3")
	}
	if mech := string(bytes.TrimRight(peer[12:32], "\x00")); mech != "NULL" {
		return fmt.Errorf("unsupported security mechanism %q", mech)
	}
	ready := readyCommand(socketType)
	if err := z.writeFrames([][]byte{ready}, flagCommand); err != nil {
		return fmt.Errorf("sending READY: %w", err)
	}
	return z.readReady()
}

// readyCommand encodes a READY command body with the Socket-Type property.
func readyCommand(socketType string) []byte {
	var b bytes.Buffer
	b.WriteByte(5)
	b.WriteString("READY")
	b.WriteByte(byte(len("Socket-Type")))
	b.WriteString("Socket-Type")
	_ = binary.Write(&b, binary.BigEndian, uint32(len(socketType)))
	b.WriteString(socketType)
	return b.Bytes()
}

func (z *zsock) readReady() error {
	flags, body, err := z.readFrame(maxCommandSize)
	if err != nil {
		return fmt.Errorf("reading READY: %w", err)
	}
	if flags&flagCommand == 0 || len(body) < 1 || len(body) < 1+int(body[0]) {
		return errors.New("peer sent no READY command")
	}
	name := string(body[1 : 1+int(body[0])])
	switch name {
	case "READY":
		return nil
	case "ERROR":
		return fmt.Errorf("peer refused the connection: %q", body[1+int(body[0]):])
	default:
		return fmt.Errorf("unexpected command %q during handshake", name)
	}
}

// send writes one multipart message.
func (z *zsock) send(frames [][]byte) error {
	return z.writeFrames(frames, 0)
}

func (z *zsock) writeFrames(frames [][]byte, base byte) error {
	z.wmu.Lock()
	defer z.wmu.Unlock()
	var hdr [9]byte
	for i, f := range frames {
		flags := base
		if i < len(frames)-1 {
			flags |= flagMore
		}
		n := 2
		if len(f) > 255 {
			flags |= flagLong
			binary.BigEndian.PutUint64(hdr[1:], uint64(len(f)))
			n = 9
		} else {
			hdr[1] = byte(len(f))
		}
		hdr[0] = flags
		if _, err := z.w.Write(hdr[:n]); err != nil {
			return err
		}
		if _, err := z.w.Write(f); err != nil {
			return err
		}
	}
	return z.w.Flush()
}

// readFrameHeader returns a frame's flags and body size.
func (z *zsock) readFrameHeader() (byte, uint64, error) {
	flags, err := z.r.ReadByte()
	if err != nil {
		return 0, 0, err
	}
	if flags&flagLong == 0 {
		n, err := z.r.ReadByte()
		return flags, uint64(n), err
	}
	var b [8]byte
	if _, err := io.ReadFull(z.r, b[:]); err != nil {
		return 0, 0, err
	}
	n := binary.BigEndian.Uint64(b[:])
	if n > 1<<40 {
		// No kernel sends a terabyte frame: the stream is corrupt.
		return 0, 0, fmt.Errorf("frame size %d: corrupt stream", n)
	}
	return flags, n, nil
}

// readFrame reads one frame whose body must not exceed limit.
func (z *zsock) readFrame(limit int) (byte, []byte, error) {
	flags, n, err := z.readFrameHeader()
	if err != nil {
		return 0, nil, err
	}
	if n > uint64(limit) {
		return 0, nil, fmt.Errorf("frame of %d bytes: %w", n, errTooLarge)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(z.r, body); err != nil {
		return 0, nil, err
	}
	return flags, body, nil
}

// recv reads the next multipart message, skipping commands. Frames that
// would take the message past MaxMessageSize are read off the wire and
// replaced by nil (a kept empty frame is non-nil); dropped counts their
// bytes. The connection stays usable either way.
func (z *zsock) recv() (frames [][]byte, dropped uint64, err error) {
	var total uint64
	for {
		flags, n, err := z.readFrameHeader()
		if err != nil {
			return nil, 0, err
		}
		switch {
		case flags&flagCommand != 0:
			// Commands (PING and friends) sit between messages; a 3.0
			// client has nothing to do with them.
			if _, err := io.CopyN(io.Discard, z.r, int64(n)); err != nil {
				return nil, 0, err
			}
			continue
		case total+n > MaxMessageSize:
			if _, err := io.CopyN(io.Discard, z.r, int64(n)); err != nil {
				return nil, 0, err
			}
			dropped += n
			frames = append(frames, nil)
		default:
			body := make([]byte, n)
			if _, err := io.ReadFull(z.r, body); err != nil {
				return nil, 0, err
			}
			total += n
			frames = append(frames, body)
		}
		if flags&flagMore == 0 {
			return frames, dropped, nil
		}
	}
}

// subscribeAll subscribes a SUB connection to every topic (ZMTP 3.0 form:
// a one-frame message 0x01 + topic).
func (z *zsock) subscribeAll() error {
	return z.send([][]byte{{0x01}})
}

func (z *zsock) close() error { return z.conn.Close() }
