package store

import (
	"context"
	"time"
)

// Nodes keeps the cluster's node records (issue 17). A node upserts its
// record every heartbeat; the API role reads them to place creates and to
// tell a dead node from a live one. One-machine mode writes none.
type Nodes interface {
	// PutNode creates or replaces the node named n.Name: its heartbeat.
	PutNode(ctx context.Context, n *Node) error
	// GetNode returns the node named name; ErrNotFound when none is.
	GetNode(ctx context.Context, name string) (*Node, error)
	// ListNodes returns every node, by name.
	ListNodes(ctx context.Context) ([]*Node, error)
	// DeleteNode removes a node's record; ErrNotFound when none is.
	DeleteNode(ctx context.Context, name string) error
	// ListSandboxesOnNode is ListSandboxes restricted to the sandboxes
	// whose Node is node ("" selects those of one-machine mode).
	ListSandboxesOnNode(ctx context.Context, node string) ([]*Sandbox, error)
}

// Node is one machine of a cluster as of its last heartbeat.
type Node struct {
	Name         string // the id: the Kubernetes node name, or the hostname
	AdvertiseURL string // where the API role reaches this node
	// Capacity of the machine.
	CPUs     int
	MemoryMB int64
	DiskMB   int64 // size of the data dir's filesystem
	// What the node holds: running sandboxes and what they reserve.
	Sandboxes        int
	ReservedCPUs     int
	ReservedMemoryMB int64
	Templates        []string // template ids whose rootfs it has cached
	Version          string   // warren's version
	StartedAt        time.Time
	HeartbeatAt      time.Time
}

// Alive says whether n's last heartbeat is within deadAfter of now.
func (n *Node) Alive(now time.Time, deadAfter time.Duration) bool {
	return now.Sub(n.HeartbeatAt) <= deadAfter
}
