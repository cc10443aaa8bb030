package warren

import (
	"context"
	"net/http"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
)

// Node is one node of a warren cluster as of its last heartbeat (GET
// /nodes).
type Node struct {
	Name         string
	AdvertiseURL string // where the API role reaches it
	// Alive: its last heartbeat is within the server's --node-dead-after.
	Alive bool
	// The machine's CPUs and memory, and its data dir's disk size.
	CPUs             int
	MemoryMB, DiskMB int64
	// Its running sandboxes and the vCPUs and memory they reserve.
	RunningSandboxes int
	ReservedCPUs     int
	ReservedMemoryMB int64
	Templates        []string // ids of the templates cached on it
	Version          string
	StartedAt        time.Time
	HeartbeatAt      time.Time
}

// ListNodes lists the cluster's nodes, by name; none for a one-machine
// server. Only the admin key may (another gets ErrUnauthorized).
func (c *Client) ListNodes(ctx context.Context) ([]Node, error) {
	resp, err := c.api.ListNodesWithResponse(ctx)
	if err := answer(resp, err, http.StatusOK); err != nil {
		return nil, err
	}
	out := make([]Node, 0, len(*resp.JSON200))
	for _, n := range *resp.JSON200 {
		out = append(out, Node{
			Name: n.Name, AdvertiseURL: n.AdvertiseURL, Alive: n.State == rest.NodeStateAlive,
			CPUs: n.CPUCount, MemoryMB: n.MemoryMB, DiskMB: n.DiskSizeMB,
			RunningSandboxes: n.RunningSandboxes, ReservedCPUs: n.ReservedCPUs, ReservedMemoryMB: n.ReservedMemoryMB,
			Templates: n.Templates, Version: n.Version, StartedAt: n.StartedAt, HeartbeatAt: n.HeartbeatAt,
		})
	}
	return out, nil
}

// DeleteNode forgets a node that stopped heartbeating (a machine gone for
// good): its record and its sandboxes' (reported killed, reason
// node-lost). A live node is ErrConflict; only the admin key may.
func (c *Client) DeleteNode(ctx context.Context, name string) error {
	resp, err := c.api.DeleteNodeWithResponse(ctx, name)
	return answer(resp, err, http.StatusNoContent)
}
