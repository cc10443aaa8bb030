package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const idemCols = "team_id, key, fingerprint, owner, sandbox_id, status, response, created_at"

// claimIdem inserts a pending claim, or takes the place of a record that is
// expired ($6) or pending and stale ($7). ON CONFLICT locks the kept row,
// so of two claims at once one inserts and the other finds its record.
const claimIdem = `INSERT INTO idempotency_keys (` + idemCols + `) VALUES ($1, $2, $3, $4, '', 0, NULL, $5)
	ON CONFLICT (team_id, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, owner = EXCLUDED.owner,
		sandbox_id = '', status = 0, response = NULL, created_at = EXCLUDED.created_at
	WHERE idempotency_keys.created_at < $6 OR (idempotency_keys.sandbox_id = '' AND idempotency_keys.created_at < $7)
	RETURNING team_id`

// ClaimIdempotencyKey implements store.Store.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k *store.IdempotencyKey, expireBefore, staleBefore time.Time) (kept *store.IdempotencyKey, claimed bool, err error) {
	if err := store.CheckIdempotencyKey(k); err != nil {
		return nil, false, err
	}
	var e encoder
	created, expire, stale := e.time(k.CreatedAt), e.time(expireBefore), e.time(staleBefore)
	if e.err != nil {
		return nil, false, fmt.Errorf("claiming idempotency key: %w", e.err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DELETE FROM idempotency_keys WHERE created_at < $1", expire); err != nil {
			return err
		}
		var team string
		err := tx.QueryRow(ctx, claimIdem, k.TeamID, k.Key, k.Fingerprint, k.Owner, created, expire, stale).Scan(&team)
		if err == nil {
			claimed = true
			return nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		kept, err = scanIdem(tx.QueryRow(ctx, "SELECT "+idemCols+" FROM idempotency_keys WHERE team_id = $1 AND key = $2", k.TeamID, k.Key))
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
	tag, err := s.pool.Exec(ctx, "UPDATE idempotency_keys SET sandbox_id = $1, status = $2, response = $3 WHERE team_id = $4 AND key = $5 AND sandbox_id = ''",
		sandboxID, status, response, teamID, key)
	return affectedOne(tag, err, fmt.Sprintf("completing idempotency key %q", key))
}

// ReleaseIdempotencyKey implements store.Store.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, teamID, key string) error {
	if _, err := s.pool.Exec(ctx, "DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2 AND sandbox_id = ''", teamID, key); err != nil {
		return fmt.Errorf("releasing idempotency key %q: %w", key, err)
	}
	return nil
}

// ReleaseIdempotencyKeysOf implements store.Store.
func (s *Store) ReleaseIdempotencyKeysOf(ctx context.Context, owner string) (int, error) {
	tag, err := s.pool.Exec(ctx, "DELETE FROM idempotency_keys WHERE owner = $1 AND sandbox_id = ''", owner)
	if err != nil {
		return 0, fmt.Errorf("releasing idempotency keys of %q: %w", owner, err)
	}
	return int(tag.RowsAffected()), nil
}

func scanIdem(row pgx.Row) (*store.IdempotencyKey, error) {
	var (
		k       store.IdempotencyKey
		created int64
	)
	if err := row.Scan(&k.TeamID, &k.Key, &k.Fingerprint, &k.Owner, &k.SandboxID, &k.Status, &k.Response, &created); err != nil {
		return nil, err
	}
	k.CreatedAt = fromNanos(&created)
	return &k, nil
}
