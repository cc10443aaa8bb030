package oci

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// What a sandbox writes to its init's stdout and stderr (envd's log, and
// anything a process in the sandbox writes there) lands in init.log on
// the host, outside the sandbox's disk quota. So the file is cut back to
// its newest InitLogKeep bytes whenever it has passed InitLogMax: the logs
// endpoints read no more than the last 16 MiB anyway (sandboxlog.Window).
const (
	InitLogMax  = 16 << 20
	InitLogKeep = 8 << 20
)

// logCheckInterval is how often a sandbox's init.log is measured: a
// sandbox can pass InitLogMax by what it writes in this time.
const logCheckInterval = 2 * time.Second

// watchLog keeps sandbox id's init.log under InitLogMax for as long as
// the sandbox's state dir exists. One watcher runs per sandbox, however
// often it is started and restored.
func (b *Backend) watchLog(id string) {
	if _, running := b.logWatchers.LoadOrStore(id, struct{}{}); running {
		return
	}
	path := filepath.Join(b.dir(id), initLog)
	go func() {
		defer b.logWatchers.Delete(id)
		t := time.NewTicker(logCheckInterval)
		defer t.Stop()
		for range t.C {
			if _, err := capLog(path, InitLogMax, InitLogKeep); errors.Is(err, fs.ErrNotExist) {
				if _, err := os.Stat(b.dir(id)); err != nil {
					return // destroyed
				}
			}
		}
	}()
}

// capLog cuts the file at path to its last keep bytes (from the first
// whole line in them) when it is larger than max, and reports whether it
// did. Writers append (O_APPEND), so they go on at the new end; what they
// append while the tail is moved is moved too, except what is written in
// the instant between the last read and the truncation.
func capLog(path string, max, keep int64) (bool, error) {
	if keep >= max {
		return false, fmt.Errorf("capping init log: keeping %d bytes of at most %d", keep, max)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Size() <= max {
		return false, err
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	size := fi.Size()
	// The byte before the tail too: a newline there means the tail
	// starts with a whole line.
	tail := make([]byte, keep+1)
	n, err := f.ReadAt(tail, size-keep-1)
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("reading init log: %w", err)
	}
	tail = tail[:n]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	// What was appended since size was taken follows the tail; a few
	// rounds, so that a writer that never pauses cannot hold this here.
	for range 4 {
		fi, err := f.Stat()
		if err != nil {
			return false, err
		}
		if fi.Size() <= size {
			break
		}
		more := make([]byte, fi.Size()-size)
		n, _ := f.ReadAt(more, size)
		tail, size = append(tail, more[:n]...), size+int64(n)
	}
	if _, err := f.WriteAt(tail, 0); err != nil {
		return false, fmt.Errorf("cutting init log: %w", err)
	}
	if err := f.Truncate(int64(len(tail))); err != nil {
		return false, fmt.Errorf("cutting init log: %w", err)
	}
	return true, nil
}
