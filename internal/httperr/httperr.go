// Package httperr is the one writer of E2B's JSON error body,
// {"code": <status>, "error_code": "...", "message": "..."}, for every HTTP
// edge of the server: the REST API, the cluster's API role, the sandbox
// traffic proxy, the dashboard's files, layer sharing and the MCP
// endpoint. It is also where an error class (errdefs) becomes an HTTP
// status and a machine-readable error_code, once, so that the two never
// disagree between edges.
//
// error_code follows E2B's API (spec/openapi.yml, schema Error): an open
// set of snake_case strings. Where E2B names a situation warren shares,
// warren uses E2B's name (sandbox_capacity_unavailable,
// sandbox_placement_timeout, sandbox_no_compatible_node,
// sandbox_create_failed, internal_server_error); the rest are warren's
// own, listed in Codes and in api/openapi.yaml.
package httperr

import (
	"encoding/json"
	"net/http"
)

// The error codes. E2B's names come first.
const (
	// CapacityUnavailable: the host (or, on a cluster, every node) has no
	// room for the sandbox now: memory, disk, addresses, the start queue
	// full. 503 with Retry-After.
	CapacityUnavailable = "sandbox_capacity_unavailable"
	// PlacementTimeout: a create or resume waited its turn in the start
	// queue past its bound. E2B answers its placement timeout 504; warren
	// keeps 503 with Retry-After, which the SDKs retry.
	PlacementTimeout = "sandbox_placement_timeout"
	// NoCompatibleNode: no alive node can run this sandbox (its snapshot
	// is kept on a node that is gone). 503.
	NoCompatibleNode = "sandbox_no_compatible_node"
	// CreateFailed: a create or resume failed on warren's side (the
	// runtime, the sandbox's start). 500.
	CreateFailed = "sandbox_create_failed"
	// Internal: any other failure on warren's side. 500.
	Internal = "internal_server_error"

	NotFound         = "not_found"             // 404: no such object (or another team's), no such route
	SandboxNotFound  = "sandbox_not_found"     // 502 from the traffic proxy: no such running sandbox
	InvalidArgument  = "invalid_argument"      // 400
	TooLarge         = "too_large"             // 413: a body past its limit
	Unauthenticated  = "unauthenticated"       // 401: no key, a bad or expired key, a bad signature
	PermissionDenied = "permission_denied"     // 403: the key lacks the scope; a bad traffic token
	Conflict         = "conflict"              // 409: already exists, wrong state
	MethodNotAllowed = "method_not_allowed"    // 405
	Gone             = "gone"                  // 410: an endpoint E2B removed
	QuotaExceeded    = "quota_exceeded"        // 429: a team's limit; Retry-After
	NoSpace          = "insufficient_storage"  // 507: the server's disk is full
	NotImplemented   = "not_implemented"       // 501: this server does not do that
	Unavailable      = "unavailable"           // 503: starting, the store or a node not answering; Retry-After
	PortNotOpen      = "sandbox_port_not_open" // 502: the sandbox runs, nothing listens on the port
	BadGateway       = "bad_gateway"           // 502: the connection to the sandbox or its node broke
)

// Codes maps every error code warren sends to the HTTP statuses it comes
// with; api/openapi.yaml documents the same list.
var Codes = map[string][]int{
	CapacityUnavailable: {http.StatusServiceUnavailable},
	PlacementTimeout:    {http.StatusServiceUnavailable},
	NoCompatibleNode:    {http.StatusServiceUnavailable},
	CreateFailed:        {http.StatusInternalServerError},
	Internal:            {http.StatusInternalServerError},
	NotFound:            {http.StatusNotFound},
	SandboxNotFound:     {http.StatusBadGateway},
	InvalidArgument:     {http.StatusBadRequest},
	TooLarge:            {http.StatusRequestEntityTooLarge},
	Unauthenticated:     {http.StatusUnauthorized},
	PermissionDenied:    {http.StatusForbidden},
	Conflict:            {http.StatusConflict},
	MethodNotAllowed:    {http.StatusMethodNotAllowed},
	Gone:                {http.StatusGone},
	QuotaExceeded:       {http.StatusTooManyRequests},
	NoSpace:             {http.StatusInsufficientStorage},
	NotImplemented:      {http.StatusNotImplemented},
	Unavailable:         {http.StatusServiceUnavailable},
	PortNotOpen:         {http.StatusBadGateway},
	BadGateway:          {http.StatusBadGateway},
}

// Body is E2B's error body; the traffic proxy adds the sandbox and port.
type Body struct {
	Code      int    `json:"code"`
	ErrorCode string `json:"error_code"`
	Message   string `json:"message"`
	SandboxID string `json:"sandboxId,omitempty"`
	Port      int    `json:"port,omitempty"`
}

// retryAfter is the Retry-After, in whole seconds, of every 429 and 503:
// JS SDK 2.51 retries a 429 only when the header is an integer.
const retryAfter = "5"

// Write sends b with status b.Code; an empty ErrorCode is the status's
// (ForStatus). A 429 or 503 gets Retry-After unless the caller set one.
// body.code always equals the HTTP status: the JS SDK decides "not found"
// by it.
func Write(w http.ResponseWriter, b Body) {
	if b.ErrorCode == "" {
		b.ErrorCode = ForStatus(b.Code)
	}
	h := w.Header()
	if (b.Code == http.StatusTooManyRequests || b.Code == http.StatusServiceUnavailable) && h.Get("Retry-After") == "" {
		h.Set("Retry-After", retryAfter)
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(b.Code)
	_ = json.NewEncoder(w).Encode(b)
}

// Error sends msg with status and the status's error code.
func Error(w http.ResponseWriter, status int, msg string) {
	Write(w, Body{Code: status, Message: msg})
}

// Fail sends err's message with the status and code its class maps to.
func Fail(w http.ResponseWriter, err error) {
	Write(w, Body{Code: Status(err), ErrorCode: CodeOf(err), Message: err.Error()})
}

// ForStatus is the code of an answer that has only a status: the class
// that status stands for.
func ForStatus(status int) string {
	switch status {
	case http.StatusNotFound:
		return NotFound
	case http.StatusBadRequest:
		return InvalidArgument
	case http.StatusRequestEntityTooLarge:
		return TooLarge
	case http.StatusUnauthorized:
		return Unauthenticated
	case http.StatusForbidden:
		return PermissionDenied
	case http.StatusConflict:
		return Conflict
	case http.StatusMethodNotAllowed:
		return MethodNotAllowed
	case http.StatusGone:
		return Gone
	case http.StatusTooManyRequests:
		return QuotaExceeded
	case http.StatusInsufficientStorage:
		return NoSpace
	case http.StatusNotImplemented:
		return NotImplemented
	case http.StatusServiceUnavailable:
		return Unavailable
	case http.StatusBadGateway:
		return BadGateway
	default:
		return Internal
	}
}
