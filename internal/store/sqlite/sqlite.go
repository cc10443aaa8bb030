// Package sqlite is the default store.Store: one SQLite file in the data
// directory, through the pure-Go modernc.org/sqlite driver so the warren
// binary stays free of cgo.
//
// The schema is built by numbered migrations embedded in the binary (see
// migrate.go). All access goes through a single connection: SQLite allows
// one writer at a time anyway, and one connection means our own goroutines
// queue in database/sql instead of failing with SQLITE_BUSY.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/sqlstore"
)

var _ store.Store = (*Store)(nil)

// Store is a store.Store backed by one SQLite database file.
type Store struct {
	*sqlstore.Store
	db *sql.DB
}

// noSpace classifies SQLite's "database or disk is full" (SQLITE_FULL,
// also as an extended code) as errdefs.ErrNoSpace; other errors pass as
// they are. The database is intact: the write that failed is rolled back
// and later writes succeed once there is space again.
func noSpace(err error) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL && !errors.Is(err, errdefs.ErrNoSpace) {
		return fmt.Errorf("%w: %w", errdefs.New(errdefs.ErrNoSpace, "the server's disk is full"), err)
	}
	return err
}

// connParams are applied by the driver to every connection it opens, so they
// survive database/sql replacing a broken connection.
//   - busy_timeout: another process (a CLI next to `warren serve`) holding
//     the write lock makes us wait up to 5s rather than fail at once.
//   - WAL: readers in other processes don't block the writer or each other.
//   - synchronous NORMAL: with WAL this cannot corrupt the file; a power cut
//     may lose the last commits, and it loses the sandboxes with them.
//   - foreign_keys: SQLite leaves them off unless asked, per connection.
//   - _txlock=immediate: transactions take the write lock at BEGIN, so a
//     read-then-write transaction can't fail halfway on a lock upgrade.
const connParams = "_pragma=busy_timeout(5000)" +
	"&_pragma=journal_mode(WAL)" +
	"&_pragma=synchronous(NORMAL)" +
	"&_pragma=foreign_keys(1)" +
	"&_txlock=immediate"

// Open opens (creating it if needed) the database at path and applies any
// migrations it has not seen yet. A database written by a newer warren, with
// migrations this binary doesn't know, is refused with ErrFailedPrecondition.
func Open(ctx context.Context, path string) (*Store, error) {
	// The driver splits the DSN at the first '?', so a path holding one
	// would silently open another file.
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("opening store %q: bad path: %w", path, errdefs.ErrInvalidArgument)
	}
	db, err := sql.Open("sqlite", path+"?"+connParams)
	if err != nil {
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	// Keep the one connection forever: for ":memory:" it *is* the database.
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	if err := migrate(ctx, db, migrations); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("opening store %q: %w", path, err)
	}
	return &Store{Store: sqlstore.New(newDB(db), dialect{}), db: db}, nil
}

// withTx runs fn in a transaction, committing if it returns nil.
func withTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) (retErr error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("beginning transaction: %w", noSpace(err))
	}
	defer func() {
		if retErr != nil {
			_ = tx.Rollback()
		}
	}()
	if err := fn(tx); err != nil {
		return noSpace(err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("committing transaction: %w", noSpace(err))
	}
	return nil
}

// isUniqueViolation reports whether err is a primary-key or UNIQUE failure,
// the database's way of saying the record already exists.
func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	return se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

// isForeignKeyViolation reports whether err is a failed REFERENCES check:
// the record points at one that does not exist.
func isForeignKeyViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY
}

// timeLayout is RFC 3339 with all nine fraction digits. RFC3339Nano trims
// trailing zeros, which would make ".1Z" sort after ".12Z" as text; a fixed
// width keeps ORDER BY on the column in time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }
