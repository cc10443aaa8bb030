package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"slices"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	mig "github.com/warren-sandbox/warren/internal/store/migration"
)

// migrationFS holds the schema history. To change the schema, add the next
// file "NNNN_what.sql"; never edit one that has shipped, because databases
// that already recorded it will not run it again.
//
// Migrations run inside a transaction, so a script must not use statements
// SQLite ignores or refuses there: PRAGMA foreign_keys is a no-op inside a
// transaction, so a table rebuild must use PRAGMA defer_foreign_keys instead.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migration is one numbered schema change.
type migration = mig.Migration

// migrations is the embedded history in version order. A malformed file is a
// build mistake, caught by the package's tests, so it panics at init.
var migrations = mig.MustLoad(migrationFS)

const createMigrationsTable = `CREATE TABLE IF NOT EXISTS schema_migrations (
	version    INTEGER NOT NULL PRIMARY KEY,
	name       TEXT    NOT NULL,
	applied_at TEXT    NOT NULL
) STRICT`

// migrate brings db up to the last of migs. Everything, including reading
// what is already applied, happens in one write transaction: two processes
// opening the same file serialize on it, and a failing script leaves the
// database exactly as it was rather than half upgraded.
func migrate(ctx context.Context, db *sql.DB, migs []migration) error {
	return withTx(ctx, db, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, createMigrationsTable); err != nil {
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

func appliedVersions(ctx context.Context, tx *sql.Tx) (map[int]bool, error) {
	rows, err := tx.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]bool{}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("reading schema_migrations: %w", err)
		}
		applied[v] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading schema_migrations: %w", err)
	}
	return applied, nil
}

// checkKnown refuses a database that recorded a migration this binary doesn't
// have: it was written by a newer warren, and running an older one against
// it could misread or damage data it doesn't understand.
func checkKnown(applied map[int]bool, migs []migration) error {
	latest := 0
	if len(migs) > 0 {
		latest = migs[len(migs)-1].Version
	}
	var unknown []int
	for v := range applied {
		if v < 1 || v > latest {
			unknown = append(unknown, v)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	slices.Sort(unknown)
	return fmt.Errorf("database schema is at version %d but this warren knows only up to %d; "+
		"it was written by a newer warren: upgrade warren or use another data directory: %w",
		unknown[len(unknown)-1], latest, errdefs.ErrFailedPrecondition)
}

func applyMigration(ctx context.Context, tx *sql.Tx, m migration) error {
	if _, err := tx.ExecContext(ctx, m.Script); err != nil {
		return fmt.Errorf("applying migration %s: %w", m.Name, err)
	}
	_, err := tx.ExecContext(ctx,
		`INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
		m.Version, m.Name, formatTime(time.Now()))
	if err != nil {
		return fmt.Errorf("recording migration %s: %w", m.Name, err)
	}
	return nil
}

// SchemaVersion is the version the migrations bring a database to; the
// Postgres store's tests hold its own to it.
func SchemaVersion() int { return migrations[len(migrations)-1].Version }
