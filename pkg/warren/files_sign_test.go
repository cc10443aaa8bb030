package warren

import (
	"testing"

	"github.com/warren-sandbox/warren/internal/filesig"
)

// TestSignFileURLMatchesServer: the SDK's signature is the one envd and
// the proxy check (internal/filesig), with and without a user and an
// expiry, for paths as users write them.
func TestSignFileURLMatchesServer(t *testing.T) {
	t.Parallel()
	tests := []struct{ path, op, user, token, exp string }{
		{"a.txt", "read", "", "secret", ""},
		{"a.txt", "write", "", "secret", ""},
		{"a.txt", "read", "user", "secret", ""},
		{"/home/user/a.txt", "write", "root", "secret", "1700000000"},
		{"dir/ü b.txt", "read", "", "tok:with:colons", "1700000000"},
		{"~/x", "write", "user", "t", "0"},
		{"", "read", "", "", ""},
	}
	for _, tc := range tests {
		got := signFileURL(tc.path, tc.op, tc.user, tc.token, tc.exp)
		want := filesig.Sign(tc.path, tc.op, tc.user, tc.token, tc.exp)
		if got != want {
			t.Errorf("signFileURL(%q, %q, %q, %q, %q) = %s, server signs %s", tc.path, tc.op, tc.user, tc.token, tc.exp, got, want)
		}
	}
	// Known answers (computed apart, with Python's hashlib), so the pair
	// cannot drift together unnoticed.
	known := []struct{ got, want string }{
		{signFileURL("a.txt", "read", "", "secret", ""), "v1_SfWJHbXY99JC+ykKjWo0lq7bU479AzrT7YKGB2EKKss"},
		{signFileURL("/home/user/a.txt", "write", "root", "secret", "1700000000"), "v1_dtOR9pSR1DckeNIbS9zbLdEz1hulzYvcfCgQelHolhk"},
	}
	for _, k := range known {
		if k.got != k.want {
			t.Errorf("signature %s, want %s", k.got, k.want)
		}
	}
}
