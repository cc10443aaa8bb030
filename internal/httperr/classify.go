package httperr

import (
	"errors"
	"net/http"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// Status is the HTTP status err's class maps to; an unclassified error
// is 500.
func Status(err error) int {
	switch {
	case errors.Is(err, errdefs.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, errdefs.ErrTooLarge):
		return http.StatusRequestEntityTooLarge
	case errors.Is(err, errdefs.ErrInvalidArgument):
		return http.StatusBadRequest
	case errors.Is(err, errdefs.ErrUnauthenticated):
		return http.StatusUnauthorized
	case errors.Is(err, errdefs.ErrPermissionDenied):
		return http.StatusForbidden
	case errdefs.IsConflict(err):
		return http.StatusConflict
	case errors.Is(err, errdefs.ErrNoSpace):
		return http.StatusInsufficientStorage
	case errors.Is(err, errdefs.ErrNotImplemented):
		return http.StatusNotImplemented
	case errors.Is(err, errdefs.ErrQuotaExceeded):
		return http.StatusTooManyRequests
	case errors.Is(err, errdefs.ErrResourceExhausted), errors.Is(err, errdefs.ErrUnavailable):
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// CodeOf is err's error code: the one an edge attached (WithCode), else
// its class's. It always agrees with Status(err).
func CodeOf(err error) string {
	var c *coded
	if errors.As(err, &c) {
		return c.code
	}
	switch status := Status(err); {
	case errors.Is(err, errdefs.ErrWaitTimedOut):
		return PlacementTimeout
	case status == http.StatusServiceUnavailable && errors.Is(err, errdefs.ErrResourceExhausted):
		return CapacityUnavailable
	default:
		return ForStatus(status)
	}
}

// coded carries an error code that the class alone does not tell.
type coded struct {
	err  error
	code string
}

func (c *coded) Error() string { return c.err.Error() }
func (c *coded) Unwrap() error { return c.err }

// WithCode gives err the error code code where its class allows it: a
// code of another status than err's class maps to is dropped, so that
// the status and the code never disagree.
func WithCode(err error, code string) error {
	if err == nil || !validFor(code, Status(err)) {
		return err
	}
	return &coded{err: err, code: code}
}

// OnInternal gives err code when it is unclassified (a 500): what a
// create or resume fails with on warren's side is sandbox_create_failed,
// not a bare internal_server_error.
func OnInternal(err error, code string) error {
	if Status(err) != http.StatusInternalServerError {
		return err
	}
	return WithCode(err, code)
}

func validFor(code string, status int) bool {
	for _, s := range Codes[code] {
		if s == status {
			return true
		}
	}
	return false
}
