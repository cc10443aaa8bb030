package server

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// shareIDFile names the shared storage (--shared-dir). The first node to
// start on it writes a random id; every node reports the id it reads in
// its heartbeat, and the API role hands a dead node's parked sandboxes
// only to a node reporting the same id: the same path on two machines
// proves nothing, the same file read from it does.
const shareIDFile = ".warren-share-id"

// openShare checks that dir is a directory warren can write and returns
// the id of the storage behind it, creating the id if it has none.
func openShare(dir string) (string, error) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return "", fmt.Errorf("--shared-dir %s: must be an existing directory (the storage every node mounts): %v", dir, err)
	}
	p := filepath.Join(dir, shareIDFile)
	for range 2 {
		if data, err := os.ReadFile(p); err == nil {
			id := strings.TrimSpace(string(data))
			if id == "" {
				return "", fmt.Errorf("--shared-dir %s: %s is empty (remove it to start afresh)", dir, p)
			}
			return id, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("--shared-dir %s: %w", dir, err)
		}
		var b [16]byte
		_, _ = rand.Read(b[:])
		id := hex.EncodeToString(b[:])
		// Written aside and linked into place, so a node starting at the
		// same moment reads a whole id or none, and one of the two wins.
		tmp := p + "." + id
		if err := os.WriteFile(tmp, []byte(id+"\n"), 0o644); err != nil {
			return "", fmt.Errorf("--shared-dir %s: cannot write there: %w", dir, err)
		}
		err := os.Link(tmp, p)
		_ = os.Remove(tmp)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("--shared-dir %s: %w", dir, err)
		}
	}
	return "", fmt.Errorf("--shared-dir %s: cannot settle its id", dir)
}
