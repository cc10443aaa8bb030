package apiserver

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

func TestParseMetadataQuery(t *testing.T) {
	t.Parallel()
	// The SDK encodes each key and value, joins them and the HTTP client
	// encodes the whole again; Query() undoes the outer layer.
	inner := url.QueryEscape("user id") + "=" + url.QueryEscape("a b&c") + "&k=v"
	q, err := url.ParseQuery("metadata=" + url.QueryEscape(url.QueryEscape(inner)))
	if err != nil {
		t.Fatal(err)
	}
	md, err := parseMetadataQuery(q.Get("metadata"))
	if err != nil {
		t.Fatal(err)
	}
	if len(md) != 2 || md["user id"] != "a b&c" || md["k"] != "v" {
		t.Fatalf("metadata = %v", md)
	}
	if _, err := parseMetadataQuery("novalue"); err == nil {
		t.Fatal("a pair without = must be rejected")
	}
}

func TestPaginate(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var all []*store.Sandbox
	for i := range 5 {
		all = append(all, &store.Sandbox{
			ID: fmt.Sprintf("s%d", i), State: store.SandboxRunning,
			StartedAt: base.Add(time.Duration(i%3) * time.Second), // ties on purpose
		})
	}
	for _, asc := range []bool{false, true} {
		t.Run(fmt.Sprint("asc=", asc), func(t *testing.T) {
			seen := map[string]bool{}
			var after *cursor
			var prev *store.Sandbox
			for pages := 0; ; pages++ {
				page, next, running := paginate(append([]*store.Sandbox(nil), all...), &filter{}, after, 2, asc)
				if running != 5 {
					t.Fatalf("running = %d", running)
				}
				for _, sb := range page {
					if seen[sb.ID] {
						t.Fatalf("%s returned twice", sb.ID)
					}
					seen[sb.ID] = true
					if prev != nil && (asc && sb.StartedAt.Before(prev.StartedAt) || !asc && sb.StartedAt.After(prev.StartedAt)) {
						t.Fatalf("order broken at %s", sb.ID)
					}
					prev = sb
				}
				if next == nil {
					break
				}
				tok, err := parseCursor(encodeCursor(next))
				if err != nil {
					t.Fatal(err)
				}
				after = tok
			}
			if len(seen) != 5 {
				t.Fatalf("saw %d of 5", len(seen))
			}
		})
	}
}
