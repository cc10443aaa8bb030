// Package rpc is the Connect edge shared by envd's services: it turns
// classified errors into Connect codes, picks the user a request acts as, and
// reads the streaming keepalive interval. Everything behind it works with
// plain Go errors (errdefs classes, os and syscall errors).
package rpc

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/warren-sandbox/warren/internal/envd/state"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// DefaultKeepalive is the keepalive interval when the client sends none.
const DefaultKeepalive = 90 * time.Second

// minKeepalive stops a client from asking envd to spin on keepalives.
const minKeepalive = 100 * time.Millisecond

// KeepaliveHeader carries the client's wanted keepalive interval in seconds.
const KeepaliveHeader = "Keepalive-Ping-Interval"

// Error converts err into a *connect.Error with the code its class calls
// for. Errors that already are Connect errors pass through unchanged.
func Error(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	return connect.NewError(Code(err), err)
}

// Code classifies err. The order matters: errdefs classes first, because a
// wrapped os error may sit under a more specific class.
func Code(err error) connect.Code {
	switch {
	case errors.Is(err, errdefs.ErrInvalidArgument):
		return connect.CodeInvalidArgument
	case errors.Is(err, errdefs.ErrNotFound):
		return connect.CodeNotFound
	case errors.Is(err, errdefs.ErrAlreadyExists):
		return connect.CodeAlreadyExists
	case errors.Is(err, errdefs.ErrUnauthenticated):
		return connect.CodeUnauthenticated
	case errors.Is(err, errdefs.ErrPermissionDenied):
		return connect.CodePermissionDenied
	case errors.Is(err, errdefs.ErrFailedPrecondition), errors.Is(err, errdefs.ErrConflict):
		return connect.CodeFailedPrecondition
	case errors.Is(err, errdefs.ErrNoSpace), errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return connect.CodeResourceExhausted
	case errors.Is(err, errdefs.ErrResourceExhausted):
		return connect.CodeResourceExhausted
	case errors.Is(err, errdefs.ErrUnavailable):
		return connect.CodeUnavailable
	case errors.Is(err, context.DeadlineExceeded):
		return connect.CodeDeadlineExceeded
	case errors.Is(err, context.Canceled):
		return connect.CodeCanceled
	case errors.Is(err, os.ErrNotExist):
		return connect.CodeNotFound
	case errors.Is(err, os.ErrExist):
		return connect.CodeAlreadyExists
	case errors.Is(err, os.ErrPermission):
		return connect.CodePermissionDenied
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.EINVAL):
		return connect.CodeInvalidArgument
	default:
		return connect.CodeInternal
	}
}

// User returns the user a Connect request acts as: the name in HTTP Basic
// auth ("Basic base64(name:)"), or the default user when there is no
// Authorization header. A malformed header or an unknown name is
// unauthenticated.
func User(st *state.State, h http.Header) (*users.User, error) {
	name, err := BasicUser(h.Get("Authorization"))
	if err != nil {
		return nil, err
	}
	return st.User(name)
}

// BasicUser extracts the username from a Basic Authorization value; "" when
// the value is empty.
func BasicUser(auth string) (string, error) {
	if auth == "" {
		return "", nil
	}
	scheme, encoded, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Basic") {
		return "", errdefs.New(errdefs.ErrUnauthenticated, "invalid authorization header: want Basic")
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return "", errdefs.New(errdefs.ErrUnauthenticated, "invalid authorization header: bad base64")
	}
	name, _, _ := strings.Cut(string(raw), ":")
	if name == "" {
		return "", errdefs.New(errdefs.ErrUnauthenticated, "invalid username")
	}
	return name, nil
}

// KeepaliveInterval reads the client's keepalive interval (whole seconds),
// falling back to DefaultKeepalive when it is absent or not a positive number.
func KeepaliveInterval(h http.Header) time.Duration {
	v := strings.TrimSpace(h.Get(KeepaliveHeader))
	if v == "" {
		return DefaultKeepalive
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs <= 0 {
		return DefaultKeepalive
	}
	return max(time.Duration(secs*float64(time.Second)), minKeepalive)
}

// StreamEnd is the error a server stream returns when its context ends:
// deadline_exceeded when Connect-Timeout-Ms ran out, canceled otherwise.
func StreamEnd(ctx context.Context) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return connect.NewError(connect.CodeDeadlineExceeded, errors.New("stream deadline exceeded"))
	}
	return connect.NewError(connect.CodeCanceled, ctx.Err())
}
