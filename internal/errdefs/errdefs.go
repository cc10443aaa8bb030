// Package errdefs holds the error classes shared by every warren package.
//
// Packages wrap one of these sentinels with %w where the failure happens; the
// edges (REST API, Connect services) classify once with errors.Is and pick the
// HTTP status or Connect code. Nothing between the two inspects message text.
package errdefs

import (
	"errors"
	"fmt"
)

// The classes. Each maps to one HTTP status at the API edge.
var (
	ErrNotFound           = errors.New("not found")             // 404
	ErrAlreadyExists      = errors.New("already exists")        // 409
	ErrInvalidArgument    = errors.New("invalid argument")      // 400
	ErrFailedPrecondition = errors.New("failed precondition")   // 409
	ErrConflict           = errors.New("conflict")              // 409
	ErrResourceExhausted  = errors.New("resource exhausted")    // 503 (host) / 429 (rate)
	ErrUnavailable        = errors.New("unavailable")           // 503
	ErrUnauthenticated    = errors.New("unauthenticated")       // 401
	ErrPermissionDenied   = errors.New("permission denied")     // 403
	ErrNoSpace            = errors.New("not enough disk space") // 507
	ErrNotImplemented     = errors.New("not implemented")       // 501
	ErrQuotaExceeded      = errors.New("quota exceeded")        // 429: a team's limit, retry later
	// ErrTooLarge is input past a size limit (413). It is an invalid
	// argument too, so that classifiers that know no 413 see bad input.
	ErrTooLarge = fmt.Errorf("too large: %w", ErrInvalidArgument)
	// ErrWaitTimedOut is work that waited its turn on a busy machine past
	// its bound (503, error_code sandbox_placement_timeout). It is
	// resource-exhausted too, so classifiers that know no such class see
	// a busy machine.
	ErrWaitTimedOut = fmt.Errorf("waited too long for a turn: %w", ErrResourceExhausted)
)

// IsNotFound reports whether err is of the not-found class.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// IsInvalidArgument reports whether err is of the invalid-argument class.
func IsInvalidArgument(err error) bool { return errors.Is(err, ErrInvalidArgument) }

// IsConflict reports whether err is a state conflict (already exists, wrong state).
func IsConflict(err error) bool {
	return errors.Is(err, ErrConflict) || errors.Is(err, ErrAlreadyExists) || errors.Is(err, ErrFailedPrecondition)
}

// classed pairs a user-facing message with its class, so callers can write
// errdefs.New(errdefs.ErrNotFound, "sandbox %q not found") and still match with errors.Is
// while the message stays free of the class text.
type classed struct {
	class error
	msg   string
}

func (c *classed) Error() string { return c.msg }
func (c *classed) Unwrap() error { return c.class }

// New returns an error of the given class whose message is exactly msg.
func New(class error, msg string) error { return &classed{class: class, msg: msg} }
