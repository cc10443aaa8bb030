// Package convert is the seam between the SDK and its Dockerfile converter
// (pkg/warren/dockerfile), which compiles BuildKit's parser. The SDK must
// not import the converter (a consumer that never builds from a
// Dockerfile would compile BuildKit), so the converter registers itself
// here when a program imports it, as database/sql drivers do, and the
// SDK's Dockerfile methods look it up.
package convert

import (
	"io"

	"github.com/warren-sandbox/warren/api/wire"
)

// Files is a build context: what COPY steps upload, as a gzip tar of
// their sources. Close removes what the conversion downloaded.
type Files interface {
	WriteTar(w io.Writer, src string) error
	Close() error
}

// Request is one Dockerfile to convert, with the settings a build from it
// adds to the spec (warren.DockerfileBuild's).
type Request struct {
	// Content is the Dockerfile, or nil to read Path (default
	// Dir/Dockerfile).
	Content []byte
	Path    string
	// Dir is the build context's directory (default ".").
	Dir       string
	BuildArgs map[string]string
	Target    string
	// ReadyCmd, when set, replaces the spec's; NoCache forces every step.
	ReadyCmd string
	NoCache  bool
	// OnWarning gets what the conversion ignored or left to the server.
	OnWarning func(string)
}

// Func converts a Dockerfile into the build spec and the context its COPY
// steps read.
type Func func(Request) (*wire.BuildStart, Files, error)

// Dockerfile is the registered converter, nil until pkg/warren/dockerfile
// is linked in.
var Dockerfile Func
