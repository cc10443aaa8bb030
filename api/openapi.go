package api

import _ "embed"

// OpenAPI is openapi.yaml: the description of warren's REST API that the
// server serves at /openapi.yaml and a test holds to its routes.
//
//go:embed openapi.yaml
var OpenAPI []byte
