package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const idemCols = "team_id, key, fingerprint, owner, sandbox_id, status, response, created_at"

// ClaimIdempotencyKey implements store.Store. SQLite runs one write
// transaction at a time, so the read and the insert cannot interleave with
// another claim's.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k *store.IdempotencyKey, expireBefore, staleBefore time.Time) (kept *store.IdempotencyKey, claimed bool, err error) {
	if err := store.CheckIdempotencyKey(k); err != nil {
		return nil, false, err
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, "DELETE FROM idempotency_keys WHERE created_at < ?", formatTime(expireBefore)); err != nil {
			return err
		}
		row := tx.QueryRowContext(ctx, "SELECT "+idemCols+" FROM idempotency_keys WHERE team_id = ? AND key = ?", k.TeamID, k.Key)
		cur, err := scanIdem(row)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case !cur.Replaceable(expireBefore, staleBefore):
			kept = cur
			return nil
		}
		claimed = true
		_, err = tx.ExecContext(ctx, "INSERT OR REPLACE INTO idempotency_keys ("+idemCols+") VALUES (?, ?, ?, ?, '', 0, NULL, ?)",
			k.TeamID, k.Key, k.Fingerprint, k.Owner, formatTime(k.CreatedAt))
		return err
	})
	if err != nil {
		return nil, false, fmt.Errorf("claiming idempotency key %q: %w", k.Key, err)
	}
	return kept, claimed, nil
}

// CompleteIdempotencyKey implements store.Store.
func (s *Store) CompleteIdempotencyKey(ctx context.Context, teamID, key, sandboxID string, status int, response []byte) error {
	if sandboxID == "" {
		return fmt.Errorf("completing idempotency key: no sandbox: %w", errdefs.ErrInvalidArgument)
	}
	res, err := s.db.ExecContext(ctx, "UPDATE idempotency_keys SET sandbox_id = ?, status = ?, response = ? WHERE team_id = ? AND key = ? AND sandbox_id = ''",
		sandboxID, status, response, teamID, key)
	if err != nil {
		return fmt.Errorf("completing idempotency key %q: %w", key, err)
	}
	return checkAffected(res, fmt.Sprintf("completing idempotency key %q", key))
}

// ReleaseIdempotencyKey implements store.Store.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, teamID, key string) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM idempotency_keys WHERE team_id = ? AND key = ? AND sandbox_id = ''", teamID, key); err != nil {
		return fmt.Errorf("releasing idempotency key %q: %w", key, err)
	}
	return nil
}

// ReleaseIdempotencyKeysOf implements store.Store.
func (s *Store) ReleaseIdempotencyKeysOf(ctx context.Context, owner string) (int, error) {
	res, err := s.db.ExecContext(ctx, "DELETE FROM idempotency_keys WHERE owner = ? AND sandbox_id = ''", owner)
	if err != nil {
		return 0, fmt.Errorf("releasing idempotency keys of %q: %w", owner, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

func scanIdem(sc scanner) (*store.IdempotencyKey, error) {
	var (
		k       store.IdempotencyKey
		created string
	)
	if err := sc.Scan(&k.TeamID, &k.Key, &k.Fingerprint, &k.Owner, &k.SandboxID, &k.Status, &k.Response, &created); err != nil {
		return nil, err
	}
	t, err := parseTime(created)
	if err != nil {
		return nil, err
	}
	k.CreatedAt = t
	return &k, nil
}
