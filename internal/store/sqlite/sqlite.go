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
	"encoding/json"
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
	db sqlDB
}

// sqlDB is the database with its writes' errors classified: a full disk
// is errdefs.ErrNoSpace, which the API answers with 507 and a message
// saying so, instead of an internal error.
type sqlDB struct{ *sql.DB }

// ExecContext is sql.DB's, with a full disk classified.
func (d sqlDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	res, err := d.DB.ExecContext(ctx, query, args...)
	return res, noSpace(err)
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
	return &Store{Store: sqlstore.New(newDB(db), dialect{}), db: sqlDB{db}}, nil
}

// inTx runs fn in a transaction, committing if it returns nil.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	return withTx(ctx, s.db.DB, fn)
}

// withTx is inTx for callers without a Store (migrations run before one
// exists).
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

// checkAffected turns "no row matched" into ErrNotFound for op.
func checkAffected(res sql.Result, op string) error {
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, errdefs.ErrNotFound)
	}
	return nil
}

// timeLayout is RFC 3339 with all nine fraction digits. RFC3339Nano trims
// trailing zeros, which would make ".1Z" sort after ".12Z" as text; a fixed
// width keeps ORDER BY on the column in time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("decoding time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// formatTimePtr maps nil to NULL.
func formatTimePtr(t *time.Time) any {
	if t == nil {
		return nil
	}
	return formatTime(*t)
}

func parseTimePtr(ns sql.NullString) (*time.Time, error) {
	if !ns.Valid {
		return nil, nil
	}
	t, err := parseTime(ns.String)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

func encodeMap(m map[string]string) (string, error) {
	if len(m) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return "", fmt.Errorf("encoding map: %w", err)
	}
	return string(b), nil
}

// decodeMap returns nil for an empty object, as memstore does, so callers
// see one shape whichever store they run on.
func decodeMap(s string) (map[string]string, error) {
	var m map[string]string
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("decoding map: %w", err)
	}
	if len(m) == 0 {
		return nil, nil
	}
	return m, nil
}

// encodeList stores a nil or empty list as "[]", so the column is never NULL.
func encodeList(l []string) (string, error) {
	if len(l) == 0 {
		return "[]", nil
	}
	b, err := json.Marshal(l)
	if err != nil {
		return "", fmt.Errorf("encoding list: %w", err)
	}
	return string(b), nil
}

// decodeList returns nil for an empty list, as memstore does.
func decodeList(s string) ([]string, error) {
	var l []string
	if err := json.Unmarshal([]byte(s), &l); err != nil {
		return nil, fmt.Errorf("decoding list: %w", err)
	}
	if len(l) == 0 {
		return nil, nil
	}
	return l, nil
}

// scanner is the part of *sql.Row and *sql.Rows the record decoders need.
type scanner interface {
	Scan(dest ...any) error
}

// placeholders returns "?, ?, …" with n marks.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}
