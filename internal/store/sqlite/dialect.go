package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/store/sqlstore"
)

// dialect is SQLite's sqlstore.Dialect.
type dialect struct{}

// Time implements sqlstore.Dialect: RFC 3339 text, the zero time too.
func (dialect) Time(t time.Time) (any, error) { return formatTime(t), nil }

// NullTime implements sqlstore.Dialect.
func (dialect) NullTime(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	return formatTime(t), nil
}

// IsUniqueViolation implements sqlstore.Dialect.
func (dialect) IsUniqueViolation(err error) bool { return isUniqueViolation(err) }

// IsForeignKeyViolation implements sqlstore.Dialect.
func (dialect) IsForeignKeyViolation(err error) bool { return isForeignKeyViolation(err) }

// Lock implements sqlstore.Dialect: nothing to add, because every
// transaction takes the database's write lock at BEGIN (_txlock=immediate).
func (dialect) Lock(int) string { return "" }

// LockName implements sqlstore.Dialect; see Lock.
func (dialect) LockName(context.Context, sqlstore.Conn, string) error { return nil }

// JSONList implements sqlstore.Dialect.
func (dialect) JSONList(expr, order string) string {
	return "json_group_array(" + expr + " ORDER BY " + order + ")"
}

// LegacyNetwork implements sqlstore.Dialect: SQLite cannot drop a column
// from old files cheaply, so the table keeps it.
func (dialect) LegacyNetwork() bool { return true }

// conn is a sqlstore.Conn on a database or a transaction.
type conn struct {
	q interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
		QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	}
}

// Exec implements sqlstore.Conn, with a full disk classified.
func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	res, err := c.q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, noSpace(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("counting changed rows: %w", err)
	}
	return n, nil
}

// Query implements sqlstore.Conn.
func (c conn) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := c.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, noSpace(err)
	}
	return sqlRows{rows}, nil
}

// QueryRow implements sqlstore.Conn.
func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return c.q.QueryRowContext(ctx, query, args...)
}

type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

// db is the sqlstore.DB of one SQLite database.
type db struct {
	conn
	sql *sql.DB
}

func newDB(d *sql.DB) *db { return &db{conn: conn{q: d}, sql: d} }

// InTx implements sqlstore.DB.
func (d *db) InTx(ctx context.Context, fn func(sqlstore.Conn) error) error {
	return withTx(ctx, d.sql, func(tx *sql.Tx) error { return fn(conn{q: tx}) })
}

// Close implements sqlstore.DB.
func (d *db) Close() error { return d.sql.Close() }
