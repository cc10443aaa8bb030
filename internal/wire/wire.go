// Package wire holds the fixed points of E2B's wire protocol that several
// parts of warren must agree on: the ports the SDKs reach inside every
// sandbox. It imports nothing, so the server, the proxy, envd, the
// interpreter and the tests can all share it.
package wire

const (
	// EnvdPort is where envd listens inside every sandbox and where the SDKs
	// send process, filesystem and /files traffic.
	EnvdPort = 49983
	// InterpreterPort is where the code-interpreter SDKs expect the
	// interpreter server.
	InterpreterPort = 49999
)
