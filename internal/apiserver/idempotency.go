package apiserver

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/log"
	"github.com/warren-sandbox/warren/internal/store"
)

// Idempotency-Key on POST /sandboxes and /v2/sandboxes: a retried create
// with the same key gets the answer of the first, never a second sandbox.
// docs/protocol-notes.md says what a retry gets in each case.
const (
	idempotencyHeader = "Idempotency-Key"
	// ReplayedHeader marks an answer given again to a retry: no sandbox
	// was made for it (the cluster's placement does not count it).
	ReplayedHeader = "Idempotent-Replayed"
	// idempotencyTTL is how long a key is kept after its first use.
	idempotencyTTL = 24 * time.Hour
	// idempotencyStale bounds a create in another server process that
	// never finished and was never released (its node died for good): its
	// claim then gives way. A restarting server releases its own at once.
	idempotencyStale  = 15 * time.Minute
	maxIdempotencyKey = 255
)

// idemPoll is how often a retry looks again at a key whose create runs in
// another server process (another node of the cluster).
var idemPoll = 200 * time.Millisecond

// releaseRetry is the first pause before a release the store refused is
// tried again; the pauses double up to 5 s.
var releaseRetry = 200 * time.Millisecond

// checkIdempotencyKey accepts 1 to 255 visible ASCII characters: UUIDs,
// base64 and the like, nothing that could be mistaken in a log line.
func checkIdempotencyKey(k string) error {
	if len(k) > maxIdempotencyKey {
		return invalid(fmt.Sprintf("%s header is longer than %d characters", idempotencyHeader, maxIdempotencyKey))
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return invalid(fmt.Sprintf("%s header may hold only visible ASCII characters (no spaces), 1 to %d of them", idempotencyHeader, maxIdempotencyKey))
		}
	}
	return nil
}

// fingerprint identifies a create's request: its endpoint and its body as
// decoded, so that whitespace and key order do not count.
func fingerprint(v2 bool, body *rest.NewSandbox) (string, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return "", fmt.Errorf("fingerprinting create: %w", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "v2=%t\n", v2)
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// idemGuard serialises the creates of one (team, key) in this process,
// so that concurrent retries wait for the first instead of polling the
// store. Waiting ends with the request's context.
type idemGuard struct {
	mu sync.Mutex
	// held maps a key to its lock (a 1-slot channel) and the number of
	// requests holding or waiting for it, which removes it when done.
	held map[string]*idemLock
}

type idemLock struct {
	ch    chan struct{}
	users int
}

func (g *idemGuard) lock(ctx context.Context, id string) (unlock func(), err error) {
	g.mu.Lock()
	if g.held == nil {
		g.held = map[string]*idemLock{}
	}
	l := g.held[id]
	if l == nil {
		l = &idemLock{ch: make(chan struct{}, 1)}
		g.held[id] = l
	}
	l.users++
	g.mu.Unlock()
	release := func() {
		g.mu.Lock()
		if l.users--; l.users == 0 {
			delete(g.held, id)
		}
		g.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, fmt.Errorf("waiting for the first create with this %s: %w", idempotencyHeader, ctx.Err())
	}
}

// idempotentCreate runs create once per (team, key): the first request
// creates, a retry with the same body gets the same answer (waiting for
// it while the first runs), one with another body a 422.
func (s *Server) idempotentCreate(w http.ResponseWriter, r *http.Request, key, fp string, create func() (*store.Sandbox, error)) {
	ctx := r.Context()
	team := teamOf(r)
	unlock, err := s.idem.lock(ctx, team+"\x00"+key)
	if err != nil {
		fail(w, r, err)
		return
	}
	defer unlock()
	kept, err := s.claimKey(ctx, team, key, fp)
	if err != nil {
		fail(w, r, err)
		return
	}
	if kept != nil {
		s.replay(w, r, kept, fp)
		return
	}
	sb, err := create()
	if err != nil {
		// A failed create pins nothing: the retry creates afresh.
		s.release(ctx, team, key)
		fail(w, r, err)
		return
	}
	resp, err := json.Marshal(s.sandboxResponse(sb))
	if err != nil {
		fail(w, r, fmt.Errorf("encoding sandbox: %w", err))
		return
	}
	if err := s.opts.Store.CompleteIdempotencyKey(context.WithoutCancel(ctx), team, key, sb.ID, http.StatusCreated, resp); err != nil {
		// The sandbox is made and this answer says so; only a retry
		// after the claim went stale could make a second one.
		log.G(ctx).Error("recording an idempotent create", "sandbox", sb.ID, "err", err)
	}
	writeRaw(w, http.StatusCreated, resp)
}

// claimKey claims (team, key) for this request and returns nil, or
// returns the kept record of an earlier request once that one is done (a
// different fingerprint at once). A create running in another process is
// waited for, polling.
func (s *Server) claimKey(ctx context.Context, team, key, fp string) (*store.IdempotencyKey, error) {
	for {
		now := time.Now().UTC()
		rec := &store.IdempotencyKey{TeamID: team, Key: key, Fingerprint: fp, Owner: s.opts.NodeName, CreatedAt: now}
		kept, claimed, err := s.opts.Store.ClaimIdempotencyKey(ctx, rec, now.Add(-idempotencyTTL), now.Add(-idempotencyStale))
		switch {
		case err != nil:
			return nil, err
		case claimed:
			return nil, nil
		case kept.Fingerprint != fp || !kept.Pending():
			return kept, nil
		case kept.Owner == s.opts.NodeName:
			// This process owns the claim and no request of it holds the
			// key (idemGuard): its create ended without a release (the
			// store was down then). The retry takes the key over.
			if err := s.opts.Store.ReleaseIdempotencyKey(ctx, team, key); err != nil {
				return nil, err
			}
			continue
		}
		select {
		case <-time.After(idemPoll):
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for the first create with this %s: %w", idempotencyHeader, ctx.Err())
		}
	}
}

// release gives up the pending claim of a create that failed. When the
// store cannot be reached, it keeps trying in the background: a retry sent
// to another node of the cluster waits for this claim until it goes.
func (s *Server) release(ctx context.Context, team, key string) {
	ctx = context.WithoutCancel(ctx)
	err := s.opts.Store.ReleaseIdempotencyKey(ctx, team, key)
	if err == nil {
		return
	}
	log.G(ctx).Warn("releasing the idempotency key of a failed create: trying again in the background", "err", err)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, idempotencyStale)
		defer cancel()
		for wait := releaseRetry; ; wait = min(2*wait, 5*time.Second) {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				log.G(ctx).Error("releasing the idempotency key of a failed create: gave up; the claim goes stale", "key", key, "err", err)
				return
			}
			if err = s.opts.Store.ReleaseIdempotencyKey(ctx, team, key); err == nil {
				return
			}
		}
	}()
}

// replay answers a retry from the kept record of the first create.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, kept *store.IdempotencyKey, fp string) {
	if kept.Fingerprint != fp {
		// 422 as the IETF draft on the header has it: the key is in use
		// for another request, which a retry of this one will not change.
		writeError(w, http.StatusUnprocessableEntity, fmt.Sprintf(
			"%s was already used with a different request body within the last %s: use a new key for a new sandbox", idempotencyHeader, idempotencyTTL))
		return
	}
	if _, err := s.opts.Store.GetSandbox(r.Context(), kept.SandboxID); err != nil {
		if !errors.Is(err, errdefs.ErrNotFound) {
			fail(w, r, err)
			return
		}
		writeError(w, http.StatusConflict, fmt.Sprintf(
			"sandbox %q, created with this %s, no longer exists (killed or timed out): use a new key to create another", kept.SandboxID, idempotencyHeader))
		return
	}
	w.Header().Set(ReplayedHeader, "true")
	writeRaw(w, kept.Status, kept.Response)
}

// writeRaw sends a JSON body already encoded.
func writeRaw(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte("\n"))
}
