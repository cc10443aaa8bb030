// Package postgres is the store.Store for a cluster: several warren
// processes (API replicas and nodes) share one Postgres database through
// the maintained pgx driver and a connection pool.
//
// The schema is built by numbered migrations embedded in the binary, one
// for each of the SQLite store's, applied at Open under an advisory lock so
// processes starting together migrate once (migrate.go). Where the SQLite
// store relied on its single writer for a read-then-write, this one takes
// row or advisory locks in the transaction instead, so concurrent writers
// in other processes keep the same invariants.
package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlstore"
)

var _ store.Store = (*Store)(nil)

// Store is a store.Store backed by a Postgres database.
type Store struct {
	*sqlstore.Store
	pool db
}

// IsURL reports whether s names a Postgres database, as `--store` takes it.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Open connects to the database at url (postgres://…; libpq's parameters,
// such as sslmode and search_path, apply) and applies the migrations it has
// not seen. A database migrated by a newer warren is refused with
// ErrFailedPrecondition.
func Open(ctx context.Context, url string) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// The URL may hold a password: name neither it nor the URL.
		return nil, fmt.Errorf("opening postgres store: bad URL: %w", errdefs.ErrInvalidArgument)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("opening postgres store: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("opening postgres store: %w: %w", errdefs.ErrUnavailable, err)
	}
	if err := migrate(ctx, pool, migrations); err != nil {
		pool.Close()
		return nil, fmt.Errorf("opening postgres store: %w", err)
	}
	return &Store{Store: sqlstore.New(newDB(db{pool}), dialect{}), pool: db{pool}}, nil
}

// inTx runs fn in a transaction, committing if it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return classify(inTx(ctx, s.pool.Pool, fn))
}

func inTx(ctx context.Context, pool *pgxpool.Pool, fn func(tx pgx.Tx) error) (retErr error) {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("beginning transaction: %w", err)
	}
	defer func() {
		if retErr != nil {
			_ = tx.Rollback(context.WithoutCancel(ctx))
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("committing transaction: %w", err)
	}
	return nil
}

// lockName takes a transaction-scoped advisory lock on name, serializing
// the transactions that check names across two tables (an alias must not
// be another template's id) where no single unique index can.
func lockName(ctx context.Context, tx pgx.Tx, name string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, name); err != nil {
		return fmt.Errorf("locking %s: %w", name, err)
	}
	return nil
}

// SQLSTATE codes the store classifies.
const (
	uniqueViolation     = "23505"
	foreignKeyViolation = "23503"
)

func hasCode(err error, code string) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == code
}

// isUniqueViolation reports a primary-key or UNIQUE failure: the record
// already exists.
func isUniqueViolation(err error) bool { return hasCode(err, uniqueViolation) }

// isForeignKeyViolation reports a failed REFERENCES check: the record
// points at one that does not exist.
func isForeignKeyViolation(err error) bool { return hasCode(err, foreignKeyViolation) }

// affectedOne turns a write that touched no row into ErrNotFound.
func affectedOne(tag pgconn.CommandTag, err error, op string) error {
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", op, errdefs.ErrNotFound)
	}
	return nil
}

// encoder turns record fields into column values, keeping the first
// error so a record's arguments read as one list.
type encoder struct{ err error }

// time is the column value of t: NULL for the zero time.
func (e *encoder) time(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		e.fail(fmt.Errorf("time %s out of the store's range: %w", t, errdefs.ErrInvalidArgument))
		return nil
	}
	return t.UnixNano()
}

func (e *encoder) timePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return e.time(*t)
}

// json encodes a map or list as a jsonb value, "{}" or "[]" when empty so
// the column is never NULL.
func (e *encoder) json(v any, empty string) any {
	b, err := json.Marshal(v)
	if err != nil {
		e.fail(fmt.Errorf("encoding %T: %w", v, err))
		return nil
	}
	if string(b) == "null" {
		return empty
	}
	return string(b)
}

func (e *encoder) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// fromNanos is the inverse of encoder.time.
func fromNanos(ns *int64) time.Time {
	if ns == nil {
		return time.Time{}
	}
	return time.Unix(0, *ns).UTC()
}

func fromNanosPtr(ns *int64) *time.Time {
	if ns == nil {
		return nil
	}
	t := fromNanos(ns)
	return &t
}

// decodeMap returns nil for an empty object, as memstore does, so callers
// see one shape whichever store they run on.
func decodeMap(b []byte) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decoding map: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// decodeList returns nil for an empty list, as memstore does.
func decodeList(b []byte) ([]string, error) {
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, fmt.Errorf("decoding list: %w", err)
	}
	if len(l) == 0 {
		return nil, nil
	}
	return l, nil
}

// collect scans every row with scan, closing rows.
func collect[T any](rows pgx.Rows, err error, op string, scan func(pgx.Row) (*T, error)) ([]*T, error) {
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

// getOne scans one row, mapping no row to ErrNotFound for what.
func getOne[T any](row pgx.Row, what string, scan func(pgx.Row) (*T, error)) (*T, error) {
	v, err := scan(row)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("%s: %w", what, errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("getting %s: %w", what, err)
	}
	return v, nil
}

// placeholders returns "$from, $from+1, …" with n marks.
func placeholders(from, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", from+i)
	}
	return b.String()
}
