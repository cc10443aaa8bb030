//go:build !linux

package e2e

import "testing"

// detachMountsUnder is a no-op off Linux, where warren does not run.
func detachMountsUnder(testing.TB, string) []string { return nil }
