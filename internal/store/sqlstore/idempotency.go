package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const idemCols = "team_id, key, fingerprint, owner, sandbox_id, status, response, created_at"

// claimIdem inserts a pending claim, or takes the place of a record that is
// expired (the 6th argument) or pending and stale (the 7th). The conflict
// locks the kept row, so of two claims at once one inserts and the other
// finds its record.
const claimIdem = `INSERT INTO idempotency_keys (` + idemCols + `) VALUES (?, ?, ?, ?, '', 0, NULL, ?)
	ON CONFLICT (team_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, owner = excluded.owner,
		sandbox_id = '', status = 0, response = NULL, created_at = excluded.created_at
	WHERE idempotency_keys.created_at < ? OR (idempotency_keys.sandbox_id = '' AND idempotency_keys.created_at < ?)
	RETURNING team_id`

// ClaimIdempotencyKey implements store.Store.
func (s *Store) ClaimIdempotencyKey(ctx context.Context, k *store.IdempotencyKey, expireBefore, staleBefore time.Time) (kept *store.IdempotencyKey, claimed bool, err error) {
	if err := store.CheckIdempotencyKey(k); err != nil {
		return nil, false, err
	}
	e := s.enc()
	created, expire, stale := e.time(k.CreatedAt), e.time(expireBefore), e.time(staleBefore)
	if e.err != nil {
		return nil, false, fmt.Errorf("claiming idempotency key: %w", e.err)
	}
	err = s.db.InTx(ctx, func(tx Conn) error {
		if _, err := tx.Exec(ctx, "DELETE FROM idempotency_keys WHERE created_at < ?", expire); err != nil {
			return err
		}
		var team string
		err := tx.QueryRow(ctx, claimIdem, k.TeamID, k.Key, k.Fingerprint, k.Owner, created, expire, stale).Scan(&team)
		if err == nil {
			claimed = true
			return nil
		}
		if !errors.Is(err, ErrNoRows) {
			return err
		}
		kept, err = scanIdem(tx.QueryRow(ctx, "SELECT "+idemCols+" FROM idempotency_keys WHERE team_id = ? AND key = ?", k.TeamID, k.Key))
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
	n, err := s.db.Exec(ctx, "UPDATE idempotency_keys SET sandbox_id = ?, status = ?, response = ? WHERE team_id = ? AND key = ? AND sandbox_id = ''",
		sandboxID, status, response, teamID, key)
	return affected(n, err, fmt.Sprintf("completing idempotency key %q", key))
}

// ReleaseIdempotencyKey implements store.Store.
func (s *Store) ReleaseIdempotencyKey(ctx context.Context, teamID, key string) error {
	if _, err := s.db.Exec(ctx, "DELETE FROM idempotency_keys WHERE team_id = ? AND key = ? AND sandbox_id = ''", teamID, key); err != nil {
		return fmt.Errorf("releasing idempotency key %q: %w", key, err)
	}
	return nil
}

// ReleaseIdempotencyKeysOf implements store.Store.
func (s *Store) ReleaseIdempotencyKeysOf(ctx context.Context, owner string) (int, error) {
	n, err := s.db.Exec(ctx, "DELETE FROM idempotency_keys WHERE owner = ? AND sandbox_id = ''", owner)
	if err != nil {
		return 0, fmt.Errorf("releasing idempotency keys of %q: %w", owner, err)
	}
	return int(n), nil
}

func scanIdem(row Row) (*store.IdempotencyKey, error) {
	var (
		k       store.IdempotencyKey
		created timeCol
	)
	if err := row.Scan(&k.TeamID, &k.Key, &k.Fingerprint, &k.Owner, &k.SandboxID, &k.Status, &k.Response, &created); err != nil {
		return nil, err
	}
	k.CreatedAt = created.t
	return &k, nil
}
