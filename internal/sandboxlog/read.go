package sandboxlog

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"time"
)

// Window is how much of the end of a log Read looks at: older lines are
// out of reach, so a sandbox that has logged gigabytes costs a query no
// more than this to scan.
const Window = 16 << 20

// MaxLine is the longest line read; longer lines are skipped (envd splits
// the start command's output well below it).
const MaxLine = 64 << 10

// maxPending bounds the bytes of undated lines held while reading backward
// for a dated line before them; past it they take q.Fallback.
const maxPending = 1 << 20

// Read returns the entries of the log in r that q selects, reading the
// last Window bytes at most. A line still being written (no newline yet)
// is left for a later read.
func Read(r io.ReadSeeker, q Query) ([]Entry, error) {
	size, err := r.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("sizing the log: %w", err)
	}
	c := &collector{q: q, last: q.Fallback, out: []Entry{}}
	start := max(size-Window, 0)
	if q.Backward {
		err = readBackward(r, start, size, c)
		c.flush(q.Fallback)
	} else {
		err = readForward(r, start, c)
	}
	return c.out, err
}

// collector dates lines and keeps those the query selects.
type collector struct {
	q   Query
	out []Entry
	// last is the time of the dated line read last (forward).
	last time.Time
	// pending are undated lines, newest first, that wait for the dated
	// line before them (backward).
	pending      []Entry
	pendingBytes int
}

func (c *collector) full() bool { return len(c.out) >= c.q.Limit }

func (c *collector) keep(e Entry) {
	if !c.full() && c.q.Matches(e.Timestamp, e.Level, e.Message) {
		c.out = append(c.out, e)
	}
}

// forward takes the lines in file order: an undated line gets the time of
// the dated line before it.
func (c *collector) forward(line []byte) {
	e, timed := Parse(line)
	if timed {
		c.last = e.Timestamp
	} else {
		e.Timestamp = c.last
	}
	c.keep(e)
}

// backward takes the lines in reverse order, holding undated ones until
// the dated line before them shows their time.
func (c *collector) backward(line []byte) {
	e, timed := Parse(line)
	if !timed {
		c.pending = append(c.pending, e)
		if c.pendingBytes += len(line); c.pendingBytes > maxPending {
			c.flush(c.q.Fallback)
		}
		return
	}
	c.flush(e.Timestamp)
	c.keep(e)
}

func (c *collector) flush(ts time.Time) {
	for _, p := range c.pending {
		p.Timestamp = ts
		c.keep(p)
	}
	c.pending, c.pendingBytes = c.pending[:0], 0
}

func readForward(r io.ReadSeeker, start int64, c *collector) error {
	if _, err := r.Seek(start, io.SeekStart); err != nil {
		return fmt.Errorf("seeking in the log: %w", err)
	}
	// MaxLine bytes and the newline: a line is kept up to MaxLine bytes
	// whichever way the log is read.
	br := bufio.NewReaderSize(r, MaxLine+1)
	// A window that starts mid-file starts mid-line.
	skip, long := start > 0, false
	for !c.full() {
		line, err := br.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			long = true
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fmt.Errorf("reading the log: %w", err)
		}
		// An empty line holds nothing; readBackward skips it too.
		if !skip && !long && len(line) > 1 {
			c.forward(line[:len(line)-1])
		}
		skip, long = false, false
	}
	return nil
}

// chunk is how much readBackward reads at a time.
const chunk = 64 << 10

// readBackward reads [start, end) from the end in chunks and hands the
// complete lines to c, last first, until c is full.
func readBackward(r io.ReadSeeker, start, end int64, c *collector) error {
	var carry []byte // the start of the file's data after pos, up to its first newline
	long := false    // carry outgrew MaxLine: drop that line
	first := true    // the data after the last newline is a line being written
	buf := make([]byte, chunk)
	for pos := end; pos > start && !c.full(); {
		n := min(int64(chunk), pos-start)
		pos -= n
		if _, err := r.Seek(pos, io.SeekStart); err != nil {
			return fmt.Errorf("seeking in the log: %w", err)
		}
		if _, err := io.ReadFull(r, buf[:n]); err != nil {
			return fmt.Errorf("reading the log: %w", err)
		}
		data := append(buf[:n:n], carry...)
		for !c.full() {
			i := bytes.LastIndexByte(data, '\n')
			if i < 0 {
				break
			}
			if line := data[i+1:]; !first && !long && len(line) > 0 && len(line) <= MaxLine {
				c.backward(line)
			}
			first, long = false, false
			data = data[:i]
		}
		carry = append(carry[:0:0], data...)
		if len(carry) > MaxLine {
			carry, long = carry[:0], true
		}
	}
	// At the start of the file the carry is a whole first line; at the
	// start of a window it is the end of a cut one.
	if start == 0 && len(carry) > 0 && len(carry) <= MaxLine && !first && !long && !c.full() {
		c.backward(carry)
	}
	return nil
}
