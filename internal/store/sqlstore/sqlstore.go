// Package sqlstore is the one SQL implementation of store.Store, shared by
// the SQLite store (one file, one writer) and the Postgres store (several
// processes, one database). A store method is written here once, in the
// SQL both databases accept; what differs between them is behind two
// small interfaces each store package implements:
//
//   - DB runs statements and transactions on the database's own driver.
//     Statements use '?' placeholders; the Postgres DB rebinds them to $n.
//   - Dialect encodes times (SQLite keeps RFC 3339 text, Postgres
//     nanoseconds), classifies constraint errors, and says how to lock:
//     Postgres takes row and advisory locks where SQLite's transactions
//     already hold the database's one write lock from BEGIN.
//
// Schemas and their migrations stay in the store packages, one history
// per database.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// ErrNoRows is what Row.Scan returns when the query found nothing,
// whichever driver ran it.
var ErrNoRows = sql.ErrNoRows

// Conn runs statements, on the database or inside a transaction.
type Conn interface {
	// Exec runs a statement and returns how many rows it changed.
	Exec(ctx context.Context, query string, args ...any) (int64, error)
	Query(ctx context.Context, query string, args ...any) (Rows, error)
	// QueryRow's error, ErrNoRows among them, shows at Scan.
	QueryRow(ctx context.Context, query string, args ...any) Row
}

// Row is one result row.
type Row interface {
	Scan(dest ...any) error
}

// Rows is a result set; Close may be called more than once.
type Rows interface {
	Row
	Next() bool
	Err() error
	Close()
}

// DB is a database with transactions.
type DB interface {
	Conn
	// InTx runs fn in a transaction, committing when it returns nil and
	// rolling back otherwise.
	InTx(ctx context.Context, fn func(tx Conn) error) error
	Close() error
}

// Lock strengths of Dialect.Lock, strongest last.
const (
	// LockShare keeps the rows read from being changed or deleted until
	// the transaction ends.
	LockShare = iota
	// LockUpdate takes the rows read for writing.
	LockUpdate
)

// Dialect is what differs between the databases beyond the driver.
type Dialect interface {
	// Time is the column value of t for a time column that is NOT NULL
	// in the database's schema (Postgres stores the zero time as NULL
	// anyway). An error says t cannot be stored.
	Time(t time.Time) (any, error)
	// NullTime is the column value of t for a column where the zero
	// time is NULL.
	NullTime(t time.Time) (any, error)
	// IsUniqueViolation reports a primary-key or UNIQUE failure.
	IsUniqueViolation(err error) bool
	// IsForeignKeyViolation reports a failed REFERENCES check.
	IsForeignKeyViolation(err error) bool
	// Lock is the clause that ends a SELECT in a transaction to lock the
	// rows it reads with strength (Lock*); "" where the transaction
	// holds the whole database already.
	Lock(strength int) string
	// LockName serializes the transactions that call it with the same
	// name until they end: the rules that span tables (an alias must not
	// be another template's id), which no unique index can hold.
	LockName(ctx context.Context, tx Conn, name string) error
	// JSONList is an aggregate of expr into a JSON array ordered by
	// order, "[]" for no rows.
	JSONList(expr, order string) string
	// ClaimHeads leases to claimer, until until, the oldest due pending
	// delivery of each webhook that has no live lease at at, up to limit
	// of them, the longest waiting first, and returns them (DeliveryColumns),
	// or nil rows for none. It runs in tx and must keep each webhook's
	// order against concurrent claimers: no two live leases on one
	// webhook's deliveries, ever. at and until are column values (Time).
	ClaimHeads(ctx context.Context, tx Conn, claimer string, at, until any, limit int) (Rows, error)
	// LegacyNetwork says the sandboxes table still has the network
	// column of schema versions before 5, read when network_policy is
	// NULL.
	LegacyNetwork() bool
}

var _ store.Store = (*Store)(nil)

// Store is a store.Store on a DB.
type Store struct {
	db DB
	d  Dialect
}

// New returns a Store on db, speaking d. It owns db: Close closes it.
func New(db DB, d Dialect) *Store { return &Store{db: db, d: d} }

// Close implements store.Store.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("closing store: %w", err)
	}
	return nil
}

// affected turns a write that touched no row into ErrNotFound for op.
func affected(n int64, err error, op string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, errdefs.ErrNotFound)
	}
	return nil
}

// getOne scans one row, mapping no row to ErrNotFound for what.
func getOne[T any](row Row, what string, scan func(Row) (*T, error)) (*T, error) {
	v, err := scan(row)
	if errors.Is(err, ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", what, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("getting %s: %w", what, err)
	}
	return v, nil
}

// collect scans every row with scan, closing rows.
func collect[T any](rows Rows, err error, op string, scan func(Row) (*T, error)) ([]*T, error) {
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	defer rows.Close()
	var out []*T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return out, nil
}
