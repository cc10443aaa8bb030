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
	"errors"
	"fmt"
	"strings"

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
	pool db // for the package's tests, which look under the store
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
