package cluster

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlite/sqlitetest"
)

func TestCandidatesOrder(t *testing.T) {
	type node struct {
		name       string
		reservedMB int64
		cached     bool
		dead       bool
	}
	tests := []struct {
		name  string
		nodes []node
		want  []string
	}{
		{"most free first", []node{{"a", 4096, false, false}, {"b", 1024, false, false}, {"c", 2048, false, false}}, []string{"b", "c", "a"}},
		{"cached first when close", []node{{"a", 1024, false, false}, {"b", 2048, true, false}}, []string{"b", "a"}},
		{"free wins when far apart", []node{{"a", 0, false, false}, {"b", 4096, true, false}}, []string{"a", "b"}},
		{"no room last, cached or not", []node{{"full", 8000, true, false}, {"b", 6000, false, false}}, []string{"b", "full"}},
		{"dead never", []node{{"dead", 0, true, true}, {"b", 1024, false, false}}, []string{"b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := sqlitetest.Open(t)
			for i, n := range tc.nodes {
				rec := &store.Node{Name: n.name, AdvertiseURL: "http://" + n.name, MemoryMB: 8192,
					ReservedMemoryMB: n.reservedMB, StartedAt: time.Unix(int64(i), 0), HeartbeatAt: time.Now()}
				if n.cached {
					rec.Templates = []string{"tpl"}
				}
				if n.dead {
					rec.HeartbeatAt = time.Now().Add(-time.Hour)
				}
				if err := st.PutNode(context.Background(), rec); err != nil {
					t.Fatal(err)
				}
			}
			p := newPlacer(newDirectory(st, time.Minute, time.Now), time.Now)
			got, err := p.candidates(context.Background(), need{template: "tpl", memoryMB: 512})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, n := range got {
				names = append(names, n.Name)
			}
			if !slices.Equal(names, tc.want) {
				t.Errorf("order %v, want %v", names, tc.want)
			}
		})
	}
}

func TestPendingUntilHeartbeat(t *testing.T) {
	st := sqlitetest.Open(t)
	now := time.Now()
	clock := func() time.Time { return now }
	put := func(name string, beat time.Time) {
		if err := st.PutNode(context.Background(), &store.Node{Name: name, AdvertiseURL: "http://" + name,
			MemoryMB: 8192, HeartbeatAt: beat}); err != nil {
			t.Fatal(err)
		}
	}
	put("a", now)
	put("b", now)
	dir := newDirectory(st, time.Minute, clock)
	p := newPlacer(dir, clock)
	p.reserve("a", 1024)(true) // made, not yet in a heartbeat
	first := func() string {
		dir.nodes = nil // read again
		got, err := p.candidates(context.Background(), need{memoryMB: 512})
		if err != nil {
			t.Fatal(err)
		}
		return got[0].Name
	}
	if got := first(); got != "b" {
		t.Fatalf("first candidate %s, want b: a's create is pending", got)
	}
	now = now.Add(time.Second)
	put("a", now) // a's heartbeat now counts it (here: reserves nothing)
	if got := first(); got != "a" {
		t.Fatalf("first candidate %s after a's heartbeat, want a (equal, by start order)", got)
	}
	p.reserve("b", 1024)(false) // refused: dropped at once
	if got := first(); got != "a" {
		t.Errorf("first candidate %s, want a: b's refused create must not count", got)
	}
}
