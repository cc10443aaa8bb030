package filesystem

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Metadata limits from the E2B protocol: an xattr name is at most 255 bytes,
// and MetadataPrefix takes 9 of them.
const (
	MetadataPrefix    = "user.e2b."
	MaxMetadataKey    = 246
	MaxMetadataTotal  = 4096
	metadataListLimit = 64 * 1024
)

// ValidateMetadata checks keys and values against the protocol's limits:
// printable ASCII only, keys of at most MaxMetadataKey bytes, and at most
// MaxMetadataTotal bytes of keys and values together.
func ValidateMetadata(md map[string]string) error {
	total := 0
	for k, v := range md {
		if k == "" {
			return errdefs.New(errdefs.ErrInvalidArgument, "metadata key must not be empty")
		}
		if len(k) > MaxMetadataKey {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("metadata key %q is longer than %d bytes", k, MaxMetadataKey))
		}
		if !printable(k) || !printable(v) {
			return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("metadata %q must be printable ASCII", k))
		}
		total += len(k) + len(v)
	}
	if total > MaxMetadataTotal {
		return errdefs.New(errdefs.ErrInvalidArgument, fmt.Sprintf("metadata is larger than %d bytes", MaxMetadataTotal))
	}
	return nil
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// ReadMetadata returns the user.e2b.* extended attributes of path (without
// following a final symlink), keyed without the prefix.
func ReadMetadata(path string) (map[string]string, error) {
	names, err := listXattrs(path)
	if err != nil {
		return nil, err
	}
	var md map[string]string
	for _, name := range names {
		key, ok := strings.CutPrefix(name, MetadataPrefix)
		if !ok {
			continue
		}
		buf := make([]byte, 4096)
		n, err := unix.Lgetxattr(path, name, buf)
		if err != nil {
			continue // removed meanwhile, or too large to be ours
		}
		if md == nil {
			md = map[string]string{}
		}
		md[key] = string(buf[:n])
	}
	return md, nil
}

// ReplaceMetadata makes md the complete metadata of path: existing
// user.e2b.* attributes not in md are removed. A filesystem without user
// xattrs only fails when md is non-empty.
func ReplaceMetadata(path string, md map[string]string) error {
	names, err := listXattrs(path)
	if err != nil && len(md) > 0 {
		return fmt.Errorf("listing metadata of %s: %w", path, err)
	}
	for _, name := range names {
		if key, ok := strings.CutPrefix(name, MetadataPrefix); ok {
			if _, keep := md[key]; !keep {
				if err := unix.Lremovexattr(path, name); err != nil && !errors.Is(err, unix.ENODATA) {
					return fmt.Errorf("removing metadata %q of %s: %w", key, path, err)
				}
			}
		}
	}
	for k, v := range md {
		if err := unix.Lsetxattr(path, MetadataPrefix+k, []byte(v), 0); err != nil {
			return fmt.Errorf("setting metadata %q on %s: %w", k, path, err)
		}
	}
	return nil
}

func listXattrs(path string) ([]string, error) {
	size, err := unix.Llistxattr(path, nil)
	if err != nil {
		return nil, fmt.Errorf("listing xattrs of %s: %w", path, err)
	}
	if size == 0 {
		return nil, nil
	}
	buf := make([]byte, min(size*2, metadataListLimit))
	n, err := unix.Llistxattr(path, buf)
	if err != nil {
		return nil, fmt.Errorf("listing xattrs of %s: %w", path, err)
	}
	var names []string
	for _, b := range bytes.Split(buf[:n], []byte{0}) {
		if len(b) > 0 {
			names = append(names, string(b))
		}
	}
	return names, nil
}
