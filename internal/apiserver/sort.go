package apiserver

import (
	"slices"

	"github.com/warren-sandbox/warren/internal/store"
)

// sortSandboxes orders by StartedAt (then id, so pages are stable),
// newest first unless asc.
func sortSandboxes(all []*store.Sandbox, asc bool) {
	slices.SortFunc(all, func(a, b *store.Sandbox) int {
		c := a.StartedAt.Compare(b.StartedAt)
		if c == 0 {
			c = compareStrings(a.ID, b.ID)
		}
		if !asc {
			c = -c
		}
		return c
	})
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
