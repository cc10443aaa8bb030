package postgres

import (
	"context"
	"embed"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/warren-sandbox/warren/internal/errdefs"
	mig "github.com/warren-sandbox/warren/internal/store/migration"
)

// migrationFS holds the schema history, numbered as the SQLite store's:
// a schema change adds the next "NNNN_what.sql" to both (TestSchemaVersion
// holds them level). Never edit a file that has shipped: databases that
// recorded it will not run it again.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered schema change.
type migration = mig.Migration

// migrations is the embedded history in version order. A malformed file is
// a build mistake the package's tests catch, so it panics at init.
var migrations = mig.MustLoad(migrationFS)

// SchemaVersion is the version the migrations bring a database to.
func SchemaVersion() int { return migrations[len(migrations)-1].Version }

// migrationLock keys the advisory lock migrations hold: every warren
// process of a cluster opening the database at once queues on it, so the
// first migrates and the others find nothing left to do.
const migrationLock = "warren.schema_migrations"

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER     NOT NULL PRIMARY KEY,
	name       TEXT        NOT NULL,
	applied_at TIMESTAMPTZ NOT NULL
)`

// migrate brings the database up to the last of migs in one transaction
// (Postgres' DDL is transactional): a failing script leaves the schema as
// it was, and the lock is released by the commit or rollback.
func migrate(ctx context.Context, pool *pgxpool.Pool, migs []migration) error {
	return inTx(ctx, pool, func(tx pgx.Tx) error {
		if err := lockName(ctx, tx, migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, createMigrationsTable); err != nil {
			return fmt.Errorf("creating schema_migrations: %w", err)
		}
		applied, err := appliedVersions(ctx, tx)
		if err != nil {
			return err
		}
		if err := checkKnown(applied, migs); err != nil {
			return err
		}
		for _, m := range migs {
			if applied[m.Version] {
				continue
			}
			if err := applyMigration(ctx, tx, m); err != nil {
				return err
			}
		}
		return nil
	})
}

func appliedVersions(ctx context.Context, tx pgx.Tx) (map[int]bool, error) {
	rows, err := tx.Query(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	versions, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	applied := make(map[int]bool, len(versions))
	for _, v := range versions {
		applied[int(v)] = true
	}
	return applied, nil
}

// checkKnown refuses a database that recorded a migration this binary
// lacks: a newer warren wrote it, and an older one could misread it.
func checkKnown(applied map[int]bool, migs []migration) error {
	latest := migs[len(migs)-1].Version
	newest := 0
	for v := range applied {
		if v < 1 || v > latest {
			newest = max(newest, v)
		}
	}
	if newest == 0 {
		return nil
	}
	return fmt.Errorf("database schema is at version %d but this warren knows only up to %d; "+
		"it was written by a newer warren: upgrade warren: %w", newest, latest, errdefs.ErrFailedPrecondition)
}

func applyMigration(ctx context.Context, tx pgx.Tx, m migration) error {
	// Exec without arguments uses the simple protocol, which runs a
	// script of several statements.
	if _, err := tx.Exec(ctx, m.Script); err != nil {
		return fmt.Errorf("applying migration %s: %w", m.Name, err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
		m.Version, m.Name, time.Now())
	if err != nil {
		return fmt.Errorf("recording migration %s: %w", m.Name, err)
	}
	return nil
}
