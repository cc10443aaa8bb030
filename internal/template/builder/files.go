package builder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/warren-sandbox/warren/api/wire"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// TeamFiles is the key a team's upload of hash is stored under: uploads
// are per team, so one team cannot learn whether another uploaded some
// content, nor build from it.
func TeamFiles(team, hash string) string {
	if !validHash(hash) {
		return hash // refused by HasFiles and SaveFiles as it is
	}
	sum := sha256.Sum256([]byte(store.TeamOf(team) + "\x00" + hash))
	return hex.EncodeToString(sum[:])
}

// HasFiles reports whether the COPY sources with this hash were uploaded.
func (b *Builder) HasFiles(hash string) bool {
	if !validHash(hash) {
		return false
	}
	_, err := os.Stat(b.filePath(hash))
	return err == nil
}

// SaveFiles stores an upload of COPY sources (a gzip tar) under its hash.
// A partial upload never becomes visible: it is written aside and renamed.
func (b *Builder) SaveFiles(hash string, r io.Reader, limit int64) error {
	if !validHash(hash) {
		return invalid("invalid files hash %q", hash)
	}
	f, err := os.CreateTemp(b.opts.FilesDir, hash+".*.part")
	if err != nil {
		return fmt.Errorf("storing upload: %w", err)
	}
	defer os.Remove(f.Name())
	n, err := io.Copy(f, io.LimitReader(r, limit+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if errors.Is(err, syscall.ENOSPC) {
		return errdefs.New(errdefs.ErrNoSpace, "the server's disk is full")
	}
	if err != nil {
		return fmt.Errorf("storing upload: %w", err)
	}
	if n > limit {
		return errdefs.New(errdefs.ErrTooLarge, fmt.Sprintf("the upload is larger than %d bytes, the most a build's files take", limit))
	}
	if err := os.Rename(f.Name(), b.filePath(hash)); err != nil {
		return fmt.Errorf("storing upload: %w", err)
	}
	return nil
}

// filesTTL is how long an upload nothing uses is kept: the SDK uploads
// just before it starts the build that needs it, and a rebuild within the
// hour skips the upload.
const filesTTL = time.Hour

// CollectFiles removes uploads of COPY sources older than filesTTL that no
// running build uses; the SDK uploads them again when a build needs them.
// It returns how many it removed.
func (b *Builder) CollectFiles(now time.Time) int {
	inUse := map[string]bool{}
	b.mu.Lock()
	for _, j := range b.jobs {
		for _, h := range j.files {
			inUse[h] = true
		}
	}
	b.mu.Unlock()
	ents, err := os.ReadDir(b.opts.FilesDir)
	if err != nil {
		return 0
	}
	removed := 0
	for _, e := range ents {
		hash, ok := strings.CutSuffix(e.Name(), filesExt)
		info, err := e.Info()
		if !ok || err != nil || inUse[hash] || now.Sub(info.ModTime()) < filesTTL {
			continue
		}
		if os.Remove(filepath.Join(b.opts.FilesDir, e.Name())) == nil {
			removed++
		}
	}
	return removed
}

// filesOf lists the upload keys req's COPY steps read, for team.
func filesOf(team string, req *wire.BuildStart) []string {
	var out []string
	add := func(steps []wire.Step) {
		for _, s := range steps {
			if s.FilesHash != "" {
				out = append(out, TeamFiles(team, s.FilesHash))
			}
		}
	}
	add(req.Steps)
	for _, st := range req.Stages {
		add(st.Steps)
	}
	return out
}

// CollectFilesEvery runs CollectFiles every interval until ctx ends, for
// uploads whose build never started.
func (b *Builder) CollectFilesEvery(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			b.CollectFiles(now)
		}
	}
}
