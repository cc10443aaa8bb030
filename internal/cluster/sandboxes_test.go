package cluster

import (
	"context"
	"slices"
	"testing"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

// TestListHidesKills: a sandbox whose kill has begun is gone from a
// node's own list at once; the API's list from the store hides it too.
func TestListHidesKills(t *testing.T) {
	st := sqlitetest.Open(t)
	ctx := context.Background()
	for _, sb := range []*store.Sandbox{
		{ID: "run", Node: "a", State: store.SandboxRunning},
		{ID: "dying", Node: "b", State: store.SandboxRunning, Intent: store.IntentKilling},
		{ID: "pausing", Node: "b", State: store.SandboxRunning, Intent: store.IntentPausing},
		{ID: "parked", Node: "a", State: store.SandboxPaused},
	} {
		if err := st.CreateSandbox(ctx, sb); err != nil {
			t.Fatal(err)
		}
	}
	list, err := Sandboxes{Store: st}.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sb := range list {
		ids = append(ids, sb.ID)
	}
	slices.Sort(ids)
	if want := []string{"parked", "pausing", "run"}; !slices.Equal(ids, want) {
		t.Errorf("listed %v, want %v", ids, want)
	}
}
