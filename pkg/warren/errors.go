package warren

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/warren-sandbox/warren/api/rest"
)

// Errors a call may return, for errors.Is. Each *APIError is one of them
// by its HTTP status.
var (
	ErrInvalid      = errors.New("invalid request")            // 400; 413 (a body past its limit)
	ErrUnauthorized = errors.New("unauthorized")               // 401, 403
	ErrNotFound     = errors.New("not found")                  // 404
	ErrConflict     = errors.New("conflict")                   // 409
	ErrRateLimited  = errors.New("rate limited or over quota") // 429
	ErrUnavailable  = errors.New("server busy or not ready")   // 503
	ErrTimeout      = errors.New("timed out")                  // 504, a command's deadline
	ErrNoSpace      = errors.New("out of space")               // 507 (a full volume; also ErrServer)
	ErrServer       = errors.New("server error")               // other 5xx
)

// APIError is an error answer of the server: E2B's {code, error_code,
// message}.
type APIError struct {
	Status  int
	Message string
	// Code is the answer's machine-readable error_code (for instance
	// "sandbox_capacity_unavailable"; api/openapi.yaml lists them); "" when
	// the server sent none.
	Code  string
	cause error // the transport's error, for errors.As
}

// Unwrap gives the underlying error (a *connect.Error for envd's RPCs).
func (e *APIError) Unwrap() error { return e.cause }

func (e *APIError) Error() string {
	return fmt.Sprintf("warren: %d %s: %s", e.Status, http.StatusText(e.Status), e.Message)
}

// Is classifies the error by its status.
func (e *APIError) Is(target error) bool {
	switch e.Status {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		return target == ErrInvalid
	case http.StatusUnauthorized, http.StatusForbidden:
		return target == ErrUnauthorized
	case http.StatusNotFound:
		return target == ErrNotFound
	case http.StatusConflict:
		return target == ErrConflict
	case http.StatusTooManyRequests:
		return target == ErrRateLimited
	case http.StatusServiceUnavailable:
		return target == ErrUnavailable
	case http.StatusGatewayTimeout:
		return target == ErrTimeout
	case http.StatusInsufficientStorage:
		return target == ErrNoSpace || target == ErrServer
	}
	return e.Status >= 500 && target == ErrServer
}

// response is what every generated answer has.
type response interface {
	StatusCode() int
	GetJSONDefault() *rest.Error
}

// answer turns a call's outcome into an error unless it succeeded with
// one of the wanted statuses.
func answer(resp response, err error, want ...int) error {
	if err != nil {
		return fmt.Errorf("warren: %w", err)
	}
	code := resp.StatusCode()
	for _, w := range want {
		if code == w {
			return nil
		}
	}
	e := &APIError{Status: code, Message: http.StatusText(code)}
	if body := resp.GetJSONDefault(); body != nil {
		e.Code = body.ErrorCode
		if body.Message != "" {
			e.Message = body.Message
		}
	}
	return e
}
