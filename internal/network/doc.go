// Package network gives each sandbox its own network namespace attached to
// one host bridge.
//
// A [Manager] owns the host side: the bridge with the gateway address, the
// IP address pool (IPAM), IPv4 forwarding and two nftables tables of its own
// (an inet table for NAT and egress policy, a bridge table that pins every
// bridge port to the one address it was given). Per sandbox, [Manager.Attach]
// allocates an address, creates a named netns (a bind mount under
// Options.NetnsDir, like `ip netns add`), a veth pair whose host end is an
// isolated port of the bridge and whose peer is eth0 inside the netns, and
// registers the address with the nftables sets. [Manager.Detach] undoes all of
// it and is idempotent.
//
// Isolation model:
//   - Sandboxes cannot reach each other: their bridge ports are isolated (the
//     bridge never forwards between two isolated ports), routed traffic that
//     enters and leaves the bridge is dropped, and a port may only send IPv4
//     and ARP from its own address, so a sandbox cannot impersonate another
//     one towards the host.
//   - Sandboxes cannot open connections to the host; the host can open
//     connections to them (the server dials envd at IP:49983).
//   - Egress leaving the bridge is masqueraded, and allowed only for the
//     addresses in the "internet" set (Attach with AllowInternet).
//
// Everything the Manager sets up on the host is idempotent: a restarted
// warren reuses the bridge, replaces its nftables tables and re-reserves the
// addresses of the sandboxes it re-adopts through [Manager.Reserve].
package network
