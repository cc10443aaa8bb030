package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store/sqlstore"
)

// dialect is Postgres' sqlstore.Dialect.
type dialect struct{}

// Times are stored as nanoseconds since the epoch (see 0001_init.sql):
// int64 covers 1678 to 2262, and the zero time is NULL.
var (
	minTime = time.Unix(0, -1<<63).UTC()
	maxTime = time.Unix(0, 1<<63-1).UTC()
)

// Time implements sqlstore.Dialect.
func (dialect) Time(t time.Time) (any, error) {
	if t.IsZero() {
		return nil, nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		return nil, fmt.Errorf("time %s out of the store's range: %w", t, errdefs.ErrInvalidArgument)
	}
	return t.UnixNano(), nil
}

// NullTime implements sqlstore.Dialect: every time column here is one.
func (d dialect) NullTime(t time.Time) (any, error) { return d.Time(t) }

// IsUniqueViolation implements sqlstore.Dialect.
func (dialect) IsUniqueViolation(err error) bool { return isUniqueViolation(err) }

// IsForeignKeyViolation implements sqlstore.Dialect.
func (dialect) IsForeignKeyViolation(err error) bool { return isForeignKeyViolation(err) }

// Lock implements sqlstore.Dialect with row locks.
func (dialect) Lock(strength int) string {
	if strength == sqlstore.LockShare {
		return " FOR SHARE"
	}
	return " FOR UPDATE"
}

// LockName implements sqlstore.Dialect with a transaction-scoped advisory
// lock.
func (dialect) LockName(ctx context.Context, tx sqlstore.Conn, name string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, name); err != nil {
		return fmt.Errorf("locking %s: %w", name, err)
	}
	return nil
}

// JSONList implements sqlstore.Dialect.
func (dialect) JSONList(expr, order string) string {
	return "coalesce(jsonb_agg(" + expr + " ORDER BY " + order + "), '[]')"
}

// LegacyNetwork implements sqlstore.Dialect: the Postgres schema started
// after the network column was retired.
func (dialect) LegacyNetwork() bool { return false }

// bound caches the statements rebound from '?' to $n: the store's
// statements are a fixed set, so it stays small.
var bound sync.Map

// rebind numbers the '?' placeholders of q ($1, $2, …). The store's
// statements hold no '?' inside string literals.
func rebind(q string) string {
	if v, ok := bound.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	n := 0
	for _, part := range strings.Split(q, "?") {
		if n > 0 {
			b.WriteString("$" + strconv.Itoa(n))
		}
		b.WriteString(part)
		n++
	}
	bound.Store(q, b.String())
	return b.String()
}

// conn is a sqlstore.Conn on the pool or a transaction.
type conn struct {
	q interface {
		Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
		Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
		QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	}
}

// Exec implements sqlstore.Conn.
func (c conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	tag, err := c.q.Exec(ctx, rebind(query), args...)
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// Query implements sqlstore.Conn.
func (c conn) Query(ctx context.Context, query string, args ...any) (sqlstore.Rows, error) {
	rows, err := c.q.Query(ctx, rebind(query), args...)
	if err != nil {
		return nil, err
	}
	return pgRows{rows}, nil
}

// QueryRow implements sqlstore.Conn.
func (c conn) QueryRow(ctx context.Context, query string, args ...any) sqlstore.Row {
	return pgRow{c.q.QueryRow(ctx, rebind(query), args...)}
}

// pgRow reports no row as sqlstore.ErrNoRows.
type pgRow struct{ pgx.Row }

func (r pgRow) Scan(dest ...any) error {
	err := r.Row.Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return sqlstore.ErrNoRows
	}
	return err
}

type pgRows struct{ pgx.Rows }

func (r pgRows) Scan(dest ...any) error { return r.Rows.Scan(dest...) }

// sqlDB is the sqlstore.DB of the pool.
type sqlDB struct {
	conn
	pool *pgxpool.Pool
}

func newDB(d db) *sqlDB { return &sqlDB{conn: conn{q: d}, pool: d.Pool} }

// InTx implements sqlstore.DB.
func (d *sqlDB) InTx(ctx context.Context, fn func(sqlstore.Conn) error) error {
	return classify(inTx(ctx, d.pool, func(tx pgx.Tx) error { return fn(conn{q: tx}) }))
}

// Close implements sqlstore.DB. It waits for queries in flight.
func (d *sqlDB) Close() error {
	d.pool.Close()
	return nil
}
