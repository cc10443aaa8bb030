package cachedfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// AcquireLock takes an exclusive flock on path, waiting (and writing
// "<name>: waiting ..." lines to progress) while another process holds it.
// The kernel drops the lock when every descriptor of the open file is
// closed, so a crashed builder never leaves it stuck; builds pass the file
// to the tools they run as well, so the lock lasts as long as any process of
// an orphaned build is still writing.
func AcquireLock(ctx context.Context, name, path string, progress io.Writer) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening build lock: %w", err)
	}
	const poll = 250 * time.Millisecond
	start := time.Now()
	lastNote := time.Time{}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		if time.Since(lastNote) >= 30*time.Second {
			fmt.Fprintf(progress, "%s: waiting for another build to finish (lock %s held, %s so far)\n",
				name, path, time.Since(start).Round(time.Second))
			lastNote = time.Now()
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for build lock: %w", context.Cause(ctx))
		case <-time.After(poll):
		}
	}
}
