package store

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
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
	// MoveSandbox hands sandbox id from node from to node to, only if it
	// is still on from, paused and parked (one conditional write, so two
	// API processes moving at once move it once). ErrNotFound when no
	// such record is; ErrConflict when it is not on from, not paused or
	// not parked.
	MoveSandbox(ctx context.Context, id, from, to string) error
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
	// ShareID names the shared storage the node parks paused sandboxes
	// on ("" for none): nodes with the same ShareID see the same files,
	// so one can take over what another parked.
	ShareID     string
	Version     string // warren's version
	StartedAt   time.Time
	HeartbeatAt time.Time
}

// MoveConflict is MoveSandbox's error for a sandbox it did not move, found
// afterwards on node, in state, parked or not. The stores share it so that
// the reason reads the same whichever one is behind the API.
func MoveConflict(id, from, node, state string, parked bool) error {
	var why string
	switch {
	case node != from:
		why = fmt.Sprintf("it is on node %q", node)
	case state != SandboxPaused:
		why = fmt.Sprintf("it is %s, not paused", state)
	case !parked:
		why = "it is not parked"
	default:
		// The record became movable between the write and the read.
		why = "it changed while being moved"
	}
	return fmt.Errorf("moving sandbox %q from node %q: %s: %w", id, from, why, errdefs.ErrConflict)
}

// Alive says whether n's last heartbeat is within deadAfter of now.
func (n *Node) Alive(now time.Time, deadAfter time.Duration) bool {
	return now.Sub(n.HeartbeatAt) <= deadAfter
}
