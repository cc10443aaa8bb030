package store

import (
	"context"
	"fmt"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
)

// IdempotencyKey records what a create sent with an Idempotency-Key
// header did, so that a retry with the same key gets the same sandbox. A
// record is pending (SandboxID "") while its create runs, done once the
// sandbox is made; a create that fails deletes its record, so a retry
// creates afresh.
type IdempotencyKey struct {
	TeamID string // keys are scoped per team
	Key    string
	// Fingerprint identifies the request the key was first used with; a
	// retry with another body is refused.
	Fingerprint string
	// Owner is the node (cluster) whose server runs the create; "" in
	// one-machine mode. Its pending claims die with that server.
	Owner     string
	SandboxID string // "" while pending
	Status    int    // the HTTP status of the answer, once done
	Response  []byte // the answer's body, once done, replayed to retries
	CreatedAt time.Time
}

// Pending reports whether the create that claimed k has not finished.
func (k *IdempotencyKey) Pending() bool { return k.SandboxID == "" }

// IdempotencyKeys keeps idempotency keys. It is part of Store.
type IdempotencyKeys interface {
	// ClaimIdempotencyKey records k (pending) unless a record with its
	// TeamID and Key is kept: then it returns that record, unchanged, and
	// claimed false. A record created before expireBefore, or pending and
	// created before staleBefore (its server died without a restart
	// releasing it), is not kept: k replaces it. Every record created
	// before expireBefore goes as well, whatever its team.
	ClaimIdempotencyKey(ctx context.Context, k *IdempotencyKey, expireBefore, staleBefore time.Time) (kept *IdempotencyKey, claimed bool, err error)
	// CompleteIdempotencyKey records the answer of the create that holds
	// the pending claim (teamID, key); ErrNotFound when there is none.
	CompleteIdempotencyKey(ctx context.Context, teamID, key, sandboxID string, status int, response []byte) error
	// ReleaseIdempotencyKey deletes the pending claim (teamID, key) of a
	// create that failed; a done record is kept. No error when absent.
	ReleaseIdempotencyKey(ctx context.Context, teamID, key string) error
	// ReleaseIdempotencyKeysOf deletes every pending claim of owner (a
	// restarting server's creates died with it) and reports how many.
	ReleaseIdempotencyKeysOf(ctx context.Context, owner string) (int, error)
}

// CheckIdempotencyKey validates a record before a store claims it.
func CheckIdempotencyKey(k *IdempotencyKey) error {
	if k == nil || k.Key == "" || k.Fingerprint == "" || k.SandboxID != "" || k.CreatedAt.IsZero() {
		return fmt.Errorf("claiming idempotency key: a pending record needs a key, a fingerprint and a time: %w", errdefs.ErrInvalidArgument)
	}
	return nil
}

// Replaceable reports whether a kept record gives way to a new claim.
func (k *IdempotencyKey) Replaceable(expireBefore, staleBefore time.Time) bool {
	return k.CreatedAt.Before(expireBefore) || (k.Pending() && k.CreatedAt.Before(staleBefore))
}
