// Package api holds warren's wire contracts: the REST API's description
// (openapi.yaml), the envd protos under proto/, the Go code generated
// from them under rest/ and gen/ (never edited by hand), and wire/, the
// hand-written types the server and the Go SDK share.
//
// Regenerate with `go generate ./api` after installing the pinned plugins:
//
//	GOBIN=/var/cache/warren/gobin go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
//	GOBIN=/var/cache/warren/gobin go install connectrpc.com/connect/cmd/protoc-gen-connect-go@v1.21.1
package api

//go:generate sh -c "PATH=/var/cache/warren/gobin:$PATH protoc -I proto -I /usr/include --go_out=gen --go_opt=paths=source_relative --connect-go_out=gen --connect-go_opt=paths=source_relative process/process.proto filesystem/filesystem.proto"
