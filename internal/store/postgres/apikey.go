package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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
	var e encoder
	args := []any{k.ID, k.Name, k.Hash, k.Mask, k.Admin, e.time(k.CreatedAt), e.timePtr(k.RevokedAt),
		k.TeamID, strings.Join(k.Scopes, " "), e.timePtr(k.ExpiresAt)}
	if e.err != nil {
		return fmt.Errorf("creating api key %q: %w", k.ID, e.err)
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO api_keys (id, name, hash, mask, admin, created_at, revoked_at,
		team_id, scopes, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, args...)
	if isUniqueViolation(err) {
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
	row := s.pool.QueryRow(ctx, selectAPIKey+` WHERE hash = $1 AND revoked_at IS NULL`, hash)
	return getOne(row, "api key", scanAPIKey)
}

// ListAPIKeys implements store.Store: oldest CreatedAt first, then by id,
// revoked keys included.
func (s *Store) ListAPIKeys(ctx context.Context) ([]*store.APIKey, error) {
	rows, err := s.pool.Query(ctx, selectAPIKey+` ORDER BY created_at NULLS FIRST, id`)
	return collect(rows, err, "listing api keys", scanAPIKey)
}

// RevokeAPIKey implements store.Store. An id match wins; revoking a revoked
// key by id keeps the first RevokedAt (coalesce in the one UPDATE, so two
// processes revoking at once agree on it). A name must match exactly one
// active key; the matches are locked so a concurrent revoke by name waits
// and then finds the key gone.
func (s *Store) RevokeAPIKey(ctx context.Context, idOrName string) error {
	now := time.Now().UnixNano()
	op := fmt.Sprintf("revoking api key %q", idOrName)
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = coalesce(revoked_at, $1) WHERE id = $2`, now, idOrName)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if tag.RowsAffected() > 0 {
			return nil
		}
		rows, err := tx.Query(ctx, `SELECT id FROM api_keys WHERE name = $1 AND revoked_at IS NULL FOR UPDATE`, idOrName)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		switch len(ids) {
		case 0:
			return fmt.Errorf("%s: %w", op, errdefs.ErrNotFound)
		case 1:
		default:
			return fmt.Errorf("%s: %d active keys have that name, use the id: %w", op, len(ids), errdefs.ErrInvalidArgument)
		}
		if _, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = $1 WHERE id = $2`, now, ids[0]); err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		return nil
	})
}

// RenameAPIKey implements store.Store.
func (s *Store) RenameAPIKey(ctx context.Context, id, name string) error {
	tag, err := s.pool.Exec(ctx, `UPDATE api_keys SET name = $1 WHERE id = $2`, name, id)
	return affectedOne(tag, err, fmt.Sprintf("renaming api key %q", id))
}

func scanAPIKey(row pgx.Row) (*store.APIKey, error) {
	var (
		k                         store.APIKey
		created, revoked, expires *int64
		scopes                    string
	)
	if err := row.Scan(&k.ID, &k.Name, &k.Hash, &k.Mask, &k.Admin, &created, &revoked, &k.TeamID, &scopes, &expires); err != nil {
		return nil, err
	}
	k.Scopes = strings.Fields(scopes)
	k.CreatedAt, k.RevokedAt, k.ExpiresAt = fromNanos(created), fromNanosPtr(revoked), fromNanosPtr(expires)
	return &k, nil
}
