package cachedfs

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// Publish flushes the finished tree, writes m as tmp's marker and renames
// tmp to final: the commit point of a build. m must already hold the
// recipe hash and the measured size.
func Publish(tmp, final string, m any) error {
	// Flush the tree before the marker says it is complete.
	syscall.Sync()
	if err := WriteMarker(tmp, m); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("publishing rootfs: %w", err)
	}
	if d, err := os.Open(filepath.Dir(final)); err == nil {
		d.Sync() // make the rename durable; best effort
		d.Close()
	}
	return nil
}
