package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// connectTimeout bounds a new connection when the URL sets none
// (connect_timeout): a server behind a partition drops the packets, and
// without it a dial would wait for the kernel to give up, minutes later.
const connectTimeout = 10 * time.Second

// db is the pool as the store's methods use it: a failure to reach the
// server (down, restarting, cut off) comes back as errdefs.ErrUnavailable,
// which the edge answers 503 with Retry-After, and a read that failed on
// a connection the server had dropped (a restart ends every session;
// the pool finds out on the next use) is made once more on another.
type db struct{ *pgxpool.Pool }

// Exec is the pool's Exec, classified. A statement is sent again only
// when the first attempt provably never reached the server.
func (d db) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := d.Pool.Exec(ctx, sql, args...)
	if err != nil && pgconn.SafeToRetry(err) && ctx.Err() == nil {
		tag, err = d.Pool.Exec(ctx, sql, args...)
	}
	return tag, classify(err)
}

// Query is the pool's Query, classified, with reads retried once.
func (d db) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := d.Pool.Query(ctx, sql, args...)
	if err != nil && retryable(ctx, sql, err) {
		rows, err = d.Pool.Query(ctx, sql, args...)
	}
	if err != nil {
		return nil, classify(err)
	}
	return classifiedRows{rows}, nil
}

// QueryRow is the pool's QueryRow, classified, with reads retried once
// (the error shows only at Scan, so the row keeps what it was asked).
func (d db) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return &retriedRow{d: d, ctx: ctx, sql: sql, args: args}
}

type retriedRow struct {
	d    db
	ctx  context.Context
	sql  string
	args []any
}

func (r *retriedRow) Scan(dest ...any) error {
	err := r.d.Pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	if err != nil && retryable(r.ctx, r.sql, err) {
		err = r.d.Pool.QueryRow(r.ctx, r.sql, r.args...).Scan(dest...)
	}
	return classify(err)
}

// classifiedRows reports a connection lost mid-read as unavailable.
type classifiedRows struct{ pgx.Rows }

func (r classifiedRows) Err() error { return classify(r.Rows.Err()) }

// retryable: err lost the connection, and sql only reads (so running it
// again changes nothing), or never reached the server at all.
func retryable(ctx context.Context, sql string, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	if pgconn.SafeToRetry(err) {
		return true
	}
	read := strings.HasPrefix(strings.ToUpper(strings.TrimSpace(sql)), "SELECT")
	return read && unreachable(err) && !errors.Is(err, context.DeadlineExceeded)
}

// classify marks err unavailable when it says the server could not be
// reached; every other error is returned as it is.
func classify(err error) error {
	if err == nil || errors.Is(err, errdefs.ErrUnavailable) || !unreachable(err) {
		return err
	}
	return &unavailableError{cause: err}
}

// unavailableError is a store that cannot be reached. Its message is the
// same whatever the cause: that names the server's address or socket
// path, which is no business of an API client.
type unavailableError struct{ cause error }

func (e *unavailableError) Error() string {
	return "the database cannot be reached: try again shortly"
}

func (e *unavailableError) Unwrap() []error { return []error{errdefs.ErrUnavailable, e.cause} }

// unreachable reports an error of the connection rather than of the
// statement: no connection could be made, the server closed it (shutting
// down, restarting, starting up), or it broke or timed out. A caller
// that went away (context.Canceled) is not one.
func unreachable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		// Class 08 is "connection exception"; 57P01-57P03 are the
		// server shutting down, crashing and not yet accepting.
		return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, net.ErrClosed)
}
