// Package crashpoint lets tests kill the server at a named step of a
// lifecycle operation, to prove that a server restarted after a crash there
// finds every sandbox, build and file in a state it can reconcile.
//
// Points cost nothing in a normal build: only a binary built with the
// warren_crashpoints tag reads WARREN_CRASH_AT, and it kills itself with
// SIGKILL (no deferred cleanup runs, as in a real crash) when a goroutine
// reaches the point of that name.
package crashpoint

// Env names the variable that holds the point to crash at.
const Env = "WARREN_CRASH_AT"

// Points are the crash points the code has, for tests that visit each.
var Points = []string{
	"create.backend", "create.recorded",
	"pause.intent", "pause.acted", "pause.checkpoint", "pause.checkpointed",
	"resume.intent", "resume.started",
	"snapshot.intent", "snapshot.checkpointed", "snapshot.taken", "snapshot.restore", "snapshot.restored",
	"fork.snapshot",
	"kill.intent", "kill.destroyed",
	"oci.create.attached", "oci.destroy.container",
	"oci.snapshot.checkpointed", "oci.snapshot.moved", "oci.stop.checkpointing",
	"build.run", "build.copy",
}
