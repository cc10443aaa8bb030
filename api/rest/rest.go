// Package rest is warren's REST API in Go: the types and the client that
// oapi-codegen generates from api/openapi.yaml (rest.gen.go, never edited
// by hand). The server answers with these types and the Go SDK
// (pkg/warren) calls through this client, so the three cannot drift apart.
package rest

//go:generate go tool oapi-codegen -config oapi-codegen.yaml ../openapi.yaml
