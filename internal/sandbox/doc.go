// Package sandbox holds the sandbox types every layer shares: what a create
// asks for, what a census, a metric sample or a pool reports, the lifecycle
// operations and kill reasons, lifetimes and quotas. It is a leaf: it knows
// the store's records and the network policy, and nothing of the manager
// (internal/lifecycle) or the runtimes, so the API edge, telemetry, usage
// and the cluster compile without them.
package sandbox

// EnvdVersion is the envd API version warren's envd implements and reports
// to the SDKs, which gate features on it.
const EnvdVersion = "0.6.13"
