package warren

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"connectrpc.com/connect"
)

// connectStatus is the HTTP status of each Connect code, as the Connect
// protocol maps them, so that envd's errors classify like the API's.
var connectStatus = map[connect.Code]int{
	connect.CodeCanceled:           499,
	connect.CodeInvalidArgument:    http.StatusBadRequest,
	connect.CodeFailedPrecondition: http.StatusBadRequest,
	connect.CodeOutOfRange:         http.StatusBadRequest,
	connect.CodeUnauthenticated:    http.StatusUnauthorized,
	connect.CodePermissionDenied:   http.StatusForbidden,
	connect.CodeNotFound:           http.StatusNotFound,
	connect.CodeAlreadyExists:      http.StatusConflict,
	connect.CodeAborted:            http.StatusConflict,
	connect.CodeResourceExhausted:  http.StatusTooManyRequests,
	connect.CodeUnimplemented:      http.StatusNotImplemented,
	connect.CodeUnavailable:        http.StatusServiceUnavailable,
	connect.CodeDeadlineExceeded:   http.StatusGatewayTimeout,
}

// rpcError classifies an envd RPC's error. A sandbox that is gone answers
// through warren's proxy with 502 "not found", which Connect reports as
// unavailable; it is ErrNotFound here, as the SDK's user means it.
func rpcError(err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return fmt.Errorf("warren: %w", err)
	}
	if ce.Code() == connect.CodeDeadlineExceeded {
		return &APIError{Status: http.StatusGatewayTimeout, Message: ce.Message(), cause: err}
	}
	status, ok := connectStatus[ce.Code()]
	if !ok {
		status = http.StatusInternalServerError
	}
	if ce.Code() == connect.CodeUnavailable && strings.Contains(strings.ToLower(ce.Message()), "not found") {
		status = http.StatusNotFound
	}
	return &APIError{Status: status, Message: ce.Message(), cause: err}
}

// httpError reads an error answer of envd or the proxy: {code, message},
// or plain text.
func httpError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &APIError{Status: resp.StatusCode, Message: strings.TrimSpace(string(data))}
	var body struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &body) == nil && body.Message != "" {
		e.Message = body.Message
	}
	if e.Message == "" {
		e.Message = http.StatusText(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusBadGateway && strings.Contains(strings.ToLower(e.Message), "not found") {
		e.Status = http.StatusNotFound
	}
	return e
}
