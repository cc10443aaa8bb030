//go:build !warren_crashpoints

package crashpoint

// Enabled reports whether this binary has crash points.
const Enabled = false

// Hit does nothing: this build has no crash points.
func Hit(string) {}
