// Package wire is warren's public protocol: the types and fixed points of
// E2B's wire protocol that the server and the Go SDK (pkg/warren) share,
// with one definition each: the ports inside every sandbox, the file URL
// signature, the template build request and the build log line. The
// REST types generated into api/rest alias these (x-go-type in
// api/openapi.yaml), so the builder, the API and the SDK read and write
// the same Go values. It imports only the standard library: a consumer of
// the SDK compiles nothing of the server through it.
package wire

const (
	// EnvdPort is where envd listens inside every sandbox and where the SDKs
	// send process, filesystem and /files traffic.
	EnvdPort = 49983
	// InterpreterPort is where the code-interpreter SDKs expect the
	// interpreter server.
	InterpreterPort = 49999
)
