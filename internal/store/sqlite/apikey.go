package sqlite

import (
	"context"
	"database/sql"
	"errors"
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
	_, err := s.db.ExecContext(ctx,
		`INSERT INTO api_keys (id, name, hash, mask, admin, created_at, revoked_at, team_id, scopes, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Name, k.Hash, k.Mask, k.Admin, formatTime(k.CreatedAt), formatTimePtr(k.RevokedAt),
		k.TeamID, strings.Join(k.Scopes, " "), formatTimePtr(k.ExpiresAt))
	if isUniqueViolation(err) {
		return fmt.Errorf("creating api key %q: id or hash already stored: %w", k.ID, errdefs.ErrAlreadyExists)
	}
	if err != nil {
		return fmt.Errorf("creating api key %q: %w", k.ID, err)
	}
	return nil
}

// GetAPIKeyByHash implements store.Store.
func (s *Store) GetAPIKeyByHash(ctx context.Context, hash string) (*store.APIKey, error) {
	row := s.db.QueryRowContext(ctx, selectAPIKey+` WHERE hash = ? AND revoked_at IS NULL`, hash)
	k, err := scanAPIKey(row)
	// The hash stays out of messages: it is as good as the key to whoever
	// can read logs and query the store.
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("api key: %w", errdefs.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("getting api key: %w", err)
	}
	return k, nil
}

// ListAPIKeys implements store.Store: oldest CreatedAt first, then by id,
// revoked keys included.
func (s *Store) ListAPIKeys(ctx context.Context) ([]*store.APIKey, error) {
	rows, err := s.db.QueryContext(ctx, selectAPIKey+` ORDER BY created_at, id`)
	if err != nil {
		return nil, fmt.Errorf("listing api keys: %w", err)
	}
	defer rows.Close()
	var out []*store.APIKey
	for rows.Next() {
		k, err := scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("listing api keys: %w", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing api keys: %w", err)
	}
	return out, nil
}

// RevokeAPIKey implements store.Store. An id match wins; revoking a revoked
// key by id is a no-op that keeps the first RevokedAt. A name must match
// exactly one key that is still active, since names need not be unique.
func (s *Store) RevokeAPIKey(ctx context.Context, idOrName string) error {
	now := formatTime(time.Now())
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx,
			`UPDATE api_keys SET revoked_at = coalesce(revoked_at, ?) WHERE id = ?`, now, idOrName)
		if err != nil {
			return fmt.Errorf("revoking api key %q: %w", idOrName, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("revoking api key %q: %w", idOrName, err)
		}
		if n > 0 {
			return nil
		}
		ids, err := activeKeysNamed(ctx, tx, idOrName)
		if err != nil {
			return err
		}
		switch len(ids) {
		case 0:
			return fmt.Errorf("revoking api key %q: %w", idOrName, errdefs.ErrNotFound)
		case 1:
		default:
			return fmt.Errorf("revoking api key %q: %d active keys have that name, use the id: %w",
				idOrName, len(ids), errdefs.ErrInvalidArgument)
		}
		_, err = tx.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ?`, now, ids[0])
		if err != nil {
			return fmt.Errorf("revoking api key %q: %w", idOrName, err)
		}
		return nil
	})
}

func activeKeysNamed(ctx context.Context, tx *sql.Tx, name string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM api_keys WHERE name = ? AND revoked_at IS NULL`, name)
	if err != nil {
		return nil, fmt.Errorf("finding api keys named %q: %w", name, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("finding api keys named %q: %w", name, err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("finding api keys named %q: %w", name, err)
	}
	return ids, nil
}

func scanAPIKey(sc scanner) (*store.APIKey, error) {
	var (
		k         store.APIKey
		createdAt string
		revokedAt sql.NullString
		expiresAt sql.NullString
		scopes    string
	)
	if err := sc.Scan(&k.ID, &k.Name, &k.Hash, &k.Mask, &k.Admin, &createdAt, &revokedAt, &k.TeamID, &scopes, &expiresAt); err != nil {
		return nil, err
	}
	k.Scopes = strings.Fields(scopes)
	var err error
	if k.CreatedAt, err = parseTime(createdAt); err != nil {
		return nil, err
	}
	if k.RevokedAt, err = parseTimePtr(revokedAt); err != nil {
		return nil, err
	}
	if k.ExpiresAt, err = parseTimePtr(expiresAt); err != nil {
		return nil, err
	}
	return &k, nil
}

// RenameAPIKey implements store.Store.
func (s *Store) RenameAPIKey(ctx context.Context, id, name string) error {
	res, err := s.db.ExecContext(ctx, `UPDATE api_keys SET name = ? WHERE id = ?`, name, id)
	if err != nil {
		return fmt.Errorf("renaming api key %q: %w", id, err)
	}
	return checkAffected(res, fmt.Sprintf("renaming api key %q", id))
}
