package sqlstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectAPIKey = `SELECT id, name, hash, mask, admin, created_at, revoked_at, team_id, scopes, expires_at FROM api_keys`

// CreateAPIKey implements store.Store. The id and the hash are both unique:
// two records for one secret would make revocation incomplete.
func (s *Store) CreateAPIKey(ctx context.Context, k *store.APIKey) error {
	if k == nil || k.ID == "" || k.Hash == "" {
		return fmt.Errorf("api key without id or hash: %w", errdefs.ErrInvalidArgument)
	}
	e := s.enc()
	args := []any{k.ID, k.Name, k.Hash, k.Mask, k.Admin, e.time(k.CreatedAt), e.timePtr(k.RevokedAt),
		k.TeamID, strings.Join(k.Scopes, " "), e.timePtr(k.ExpiresAt)}
	if e.err != nil {
		return fmt.Errorf("creating api key %q: %w", k.ID, e.err)
	}
	_, err := s.db.Exec(ctx, `INSERT INTO api_keys (id, name, hash, mask, admin, created_at, revoked_at,
		team_id, scopes, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, args...)
	if s.d.IsUniqueViolation(err) {
		return fmt.Errorf("creating api key %q: id or hash already stored: %w", k.ID, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("creating api key %q: %w", k.ID, err)
	}
	return nil
}

// GetAPIKeyByHash implements store.Store. The hash stays out of messages:
// it is as good as the key to whoever can read logs and query the store.
func (s *Store) GetAPIKeyByHash(ctx context.Context, hash string) (*store.APIKey, error) {
	row := s.db.QueryRow(ctx, selectAPIKey+` WHERE hash = ? AND revoked_at IS NULL`, hash)
	return getOne(row, "api key", scanAPIKey)
}

// ListAPIKeys implements store.Store: oldest CreatedAt first, then by id,
// revoked keys included.
func (s *Store) ListAPIKeys(ctx context.Context) ([]*store.APIKey, error) {
	rows, err := s.db.Query(ctx, selectAPIKey+` ORDER BY created_at NULLS FIRST, id`)
	return collect(rows, err, "listing api keys", scanAPIKey)
}

// RevokeAPIKey implements store.Store. An id match wins; revoking a revoked
// key by id keeps the first RevokedAt (coalesce in the one UPDATE, so two
// processes revoking at once agree on it). A name must match exactly one
// active key, since names need not be unique; the matches are locked so a
// concurrent revoke by name waits and then finds the key gone.
func (s *Store) RevokeAPIKey(ctx context.Context, idOrName string) error {
	op := fmt.Sprintf("revoking api key %q", idOrName)
	now, err := s.d.NullTime(time.Now())
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	return s.db.InTx(ctx, func(tx Conn) error {
		n, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, now, idOrName)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if n > 0 {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT id FROM api_keys WHERE name = ? AND revoked_at IS NULL`+s.d.Lock(LockUpdate), idOrName)
		ids, err := collect(rows, err, op, scanString)
		if err != nil {
			return err
		}
		switch len(ids) {
		case 0:
			return fmt.Errorf("%s: %w", op, errdefs.ErrNotFound)
		case 1:
		default:
			return fmt.Errorf("%s: %d active keys have that name, use the id: %w", op, len(ids), errdefs.ErrInvalidArgument)
		}
		if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ?`, now, *ids[0]); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		return nil
	})
}

// RenameAPIKey implements store.Store.
func (s *Store) RenameAPIKey(ctx context.Context, id, name string) error {
	n, err := s.db.Exec(ctx, `UPDATE api_keys SET name = ? WHERE id = ?`, name, id)
	return affected(n, err, fmt.Sprintf("renaming api key %q", id))
}

func scanAPIKey(row Row) (*store.APIKey, error) {
	var (
		k                         store.APIKey
		created, revoked, expires timeCol
		scopes                    string
	)
	if err := row.Scan(&k.ID, &k.Name, &k.Hash, &k.Mask, &k.Admin, &created, &revoked, &k.TeamID, &scopes, &expires); err != nil {
		return nil, err
	}
	k.Scopes = strings.Fields(scopes)
	k.CreatedAt, k.RevokedAt, k.ExpiresAt = created.t, revoked.ptr(), expires.ptr()
	return &k, nil
}

// scanString scans a row of one text column.
func scanString(row Row) (*string, error) {
	var v string
	if err := row.Scan(&v); err != nil {
		return nil, err
	}
	return &v, nil
}
