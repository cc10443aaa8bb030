package sandbox

import "time"

// Lifecycle operations an OpObserver is told about.
const (
	OpCreate = "create"
	OpPause  = "pause"
	OpResume = "resume"
	OpKill   = "kill"
)

// OpObserver is told, after each lifecycle operation (one of the Op
// constants) on a sandbox of runtime, how long it took and how it ended.
// It runs on the operation's goroutine, so it must be quick.
type OpObserver func(op, runtime string, took time.Duration, err error)

// Why a sandbox was killed: a killed event's eventData.reason.
const (
	KillRequested = "request"   // DELETE /sandboxes/{id}
	KillTimeout   = "timeout"   // its timeout passed
	KillDied      = "died"      // its init exited behind warren's back, or it was gone after a restart
	KillRetention = "retention" // paused longer than --paused-retention
	// KillInterrupted: a kill a crash cut short, finished by the restart.
	KillInterrupted = "interrupted"
	// KillNodeLost: its node stopped heartbeating for longer than the
	// cluster's bound, and the API role reported it killed.
	KillNodeLost = "node-lost"
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
