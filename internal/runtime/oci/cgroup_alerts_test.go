package oci

import (
	"slices"
	"testing"
)

func TestAlertThresholds(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		mem, limit uint64
		want       []uint64
	}{
		{512 * mib, 512*mib + sentryHeadroom(512), []uint64{256 * mib, 288 * mib, 320 * mib, 352 * mib, 384 * mib, 416 * mib, 448 * mib, 480 * mib, 512 * mib, 544 * mib, 576 * mib, 608 * mib, 640 * mib}},
		{128 * mib, 128*mib + 32*mib, []uint64{64 * mib, 80 * mib, 96 * mib, 112 * mib, 128 * mib, 144 * mib}}, // rungs of 16 MiB at least
		{0, 512 * mib, nil},         // no memory given: nothing to watch
		{512 * mib, 200 * mib, nil}, // a limit below the ladder
	} {
		if got := alertThresholds(tc.mem, tc.limit); !slices.Equal(got, tc.want) {
			t.Errorf("alertThresholds(%d MiB, %d MiB) = %v, want %v", tc.mem/mib, tc.limit/mib, got, tc.want)
		}
	}
}

// TestRuntimeEnv: the runtimes, and the processes they leave running
// (runsc's gofer), get a PATH, not warren's environment and its secrets.
func TestRuntimeEnv(t *testing.T) {
	t.Setenv("WARREN_API_KEY", "e2b_secret")
	env := runtimeEnv()
	if slices.ContainsFunc(env, func(kv string) bool { return len(kv) > 6 && kv[:6] == "WARREN" }) || !slices.ContainsFunc(env, func(kv string) bool { return len(kv) > 5 && kv[:5] == "PATH=" }) {
		t.Fatalf("runtime environment %v", env)
	}
}
