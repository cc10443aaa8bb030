package sandbox

import (
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// How long a sandbox lives after a resume (docs/protocol-notes.md, "Pause
// keeps the remaining lifetime"). A pause keeps the sandbox's end as it
// was and records when it paused, both in the store, so what was left
// (EndAt - PausedAt) survives a restart while paused.
const (
	// DefaultTimeout is the lifetime nobody asked for: the SDKs' default.
	DefaultTimeout = 300 * time.Second
	// MinResumeLifetime is the least a resume gives, so a sandbox paused
	// with seconds left does not time out under its user's first call.
	MinResumeLifetime = 30 * time.Second
	// NoTimeout, as Connect's timeout, asks for no particular lifetime: a
	// paused sandbox resumes with what it had left, a running one lives
	// at least DefaultTimeout from now.
	NoTimeout time.Duration = -1
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
		d = DefaultTimeout
	}
	return max(d, MinResumeLifetime)
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
