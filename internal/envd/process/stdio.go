package process

import (
	"fmt"
	"os"
	"syscall"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"

	pb "github.com/warren-sandbox/warren/api/gen/process"
)

// Default PTY size when the client sends zeros.
const (
	defaultCols = 80
	defaultRows = 24
)

// stdio holds both ends of a new process's standard streams. Parent ends
// stay non-blocking (pollable), so reads can be given deadlines; only child
// ends are ever turned into raw fds.
type stdio struct {
	pty, tty *os.File // PTY mode

	stdin, stdinChild   *os.File // pipe mode; stdin is nil when disabled
	stdout, stdoutChild *os.File
	stderr, stderrChild *os.File
	devNull             *os.File
}

func newStdio(ptyReq *pb.PTY, stdinWanted bool) (_ *stdio, err error) {
	sio := &stdio{}
	defer func() {
		if err != nil {
			sio.closeChildEnds()
			sio.closeParentEnds()
		}
	}()
	if ptyReq != nil {
		if sio.pty, sio.tty, err = pty.Open(); err != nil {
			return nil, fmt.Errorf("opening pty: %w", err)
		}
		return sio, resize(sio.pty, ptyReq.GetSize())
	}
	if sio.stdoutChild, sio.stdout, err = pipe(); err != nil {
		return nil, err
	}
	if sio.stderrChild, sio.stderr, err = pipe(); err != nil {
		return nil, err
	}
	if stdinWanted {
		// The child reads, envd writes.
		if sio.stdinChild, sio.stdin, err = os.Pipe(); err != nil {
			return nil, fmt.Errorf("creating stdin pipe: %w", err)
		}
		return sio, nil
	}
	if sio.devNull, err = os.Open(os.DevNull); err != nil {
		return nil, fmt.Errorf("opening %s: %w", os.DevNull, err)
	}
	return sio, nil
}

// pipe returns (child write end, parent read end).
func pipe() (child, parent *os.File, err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("creating output pipe: %w", err)
	}
	return w, r, nil
}

// outputs lists the parent ends to read, stdout first.
func (sio *stdio) outputs() []*os.File {
	if sio.pty != nil {
		return []*os.File{sio.pty}
	}
	return []*os.File{sio.stdout, sio.stderr}
}

func (sio *stdio) childFds() []uintptr {
	if sio.tty != nil {
		fd := sio.tty.Fd()
		return []uintptr{fd, fd, fd}
	}
	in := sio.devNull
	if sio.stdinChild != nil {
		in = sio.stdinChild
	}
	return []uintptr{in.Fd(), sio.stdoutChild.Fd(), sio.stderrChild.Fd()}
}

// sysProcAttr puts the child in a process group of its own (a new session
// with the PTY as controlling terminal, for a PTY), so that signals reach
// everything it starts.
func (sio *stdio) sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	if sio.tty != nil {
		return &syscall.SysProcAttr{Credential: cred, Setsid: true, Setctty: true, Ctty: 0}
	}
	return &syscall.SysProcAttr{Credential: cred, Setpgid: true}
}

func (sio *stdio) closeChildEnds() {
	for _, f := range []*os.File{sio.tty, sio.stdinChild, sio.stdoutChild, sio.stderrChild, sio.devNull} {
		if f != nil {
			_ = f.Close()
		}
	}
}

func (sio *stdio) closeParentEnds() {
	for _, f := range []*os.File{sio.pty, sio.stdin, sio.stdout, sio.stderr} {
		if f != nil {
			_ = f.Close()
		}
	}
}

// resize sets the PTY window size through SyscallConn: pty.Setsize would call
// Fd(), which switches the master to blocking mode and breaks read deadlines.
func resize(f *os.File, size *pb.PTY_Size) error {
	cols, rows := size.GetCols(), size.GetRows()
	if cols == 0 {
		cols = defaultCols
	}
	if rows == 0 {
		rows = defaultRows
	}
	ws := &unix.Winsize{Col: uint16(min(cols, 0xffff)), Row: uint16(min(rows, 0xffff))}
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("resizing pty: %w", err)
	}
	var ioctlErr error
	if err := rc.Control(func(fd uintptr) { ioctlErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) }); err != nil {
		return fmt.Errorf("resizing pty: %w", err)
	}
	if ioctlErr != nil {
		return fmt.Errorf("resizing pty: %w", ioctlErr)
	}
	return nil
}
