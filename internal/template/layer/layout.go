package layer

import (
	"path/filepath"
	"strings"
)

// ShortKey returns the short key a path names when it is in a layer
// store's layout, <root>/layers/<short key>, and ok=false otherwise. The
// store records a template's layers by path, and in a cluster that path
// is the building node's: the short key is what names the same layer in
// any node's own store.
func ShortKey(p string) (short string, ok bool) {
	p = filepath.Clean(p)
	base := filepath.Base(p)
	if len(base) != shortLen || !ValidKey(base) || filepath.Base(filepath.Dir(p)) != "layers" {
		return "", false
	}
	return base, true
}

// Find returns the full key of the complete layer whose key starts with
// prefix (at least a short key's length), if the store has it. It reads
// only this store's own directory, whatever other stores hold.
func (s *Store) Find(prefix string) (key string, ok bool) {
	if !ValidKey(prefix) {
		return "", false
	}
	key = s.owner(prefix)
	if !strings.HasPrefix(key, prefix) || !s.Has(key) {
		return "", false
	}
	return key, true
}
