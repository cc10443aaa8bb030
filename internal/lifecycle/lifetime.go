package lifecycle

import (
	"time"

	"github.com/warren-sandbox/warren/internal/sandbox"
	"github.com/warren-sandbox/warren/internal/store"
)

// remaining is what a paused sandbox had left of its lifetime when it
// paused; 0 when its own timeout paused it.
func remaining(sb *store.Sandbox) time.Duration {
	if sb.PausedAt.IsZero() {
		return 0
	}
	return max(0, sb.EndAt.Sub(sb.PausedAt))
}

// resumeLifetime is how long the paused sandbox sb lives from its resume
// when asked lives (NoTimeout: nothing asked):
//   - asked: at least that, and never less than it had left: a connect
//     never shortens a sandbox, paused or running, and SDKs before JS
//     2.51 send their 300 s default whether or not their user gave one;
//   - nothing asked: what it had left;
//   - nothing asked and nothing left (its timeout paused it): a new
//     DefaultTimeout, as before this rule;
//
// and never less than MinResumeLifetime.
func resumeLifetime(sb *store.Sandbox, asked time.Duration) time.Duration {
	left := remaining(sb)
	d := left
	switch {
	case asked >= 0:
		d = max(asked, left)
	case left == 0:
		d = sandbox.DefaultTimeout
	}
	return max(d, sandbox.MinResumeLifetime)
}

// lifeBase is the instant a new timeout counts from: now for a running
// sandbox; for a paused one, the moment it paused, so that a timeout set
// while paused is what it will have left when resumed.
func lifeBase(sb *store.Sandbox, now time.Time) time.Time {
	if sb.State == store.SandboxPaused && !sb.PausedAt.IsZero() {
		return sb.PausedAt
	}
	return now
}
