package wire

import "testing"

func TestSignFileURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		path, op, user, tok, expr string
		want                      string
	}{
		// Vector computed independently with sha256sum and base64.
		{"read, no user", "hello.txt", "read", "", "tok", "", "v1_dEkXrS/Y6p/Op9rMpEpzXeRJ5bBL0LYkjrRJr9/Zz44"},
		// Vectors computed apart with Python's hashlib, as the SDKs sign.
		{"read, secret", "a.txt", "read", "", "secret", "", "v1_SfWJHbXY99JC+ykKjWo0lq7bU479AzrT7YKGB2EKKss"},
		{"write, user, expiry", "/home/user/a.txt", "write", "root", "secret", "1700000000", "v1_dtOR9pSR1DckeNIbS9zbLdEz1hulzYvcfCgQelHolhk"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := SignFileURL(tc.path, tc.op, tc.user, tc.tok, tc.expr); got != tc.want {
				t.Fatalf("SignFileURL = %q, want %q", got, tc.want)
			}
		})
	}
	if SignFileURL("a", "write", "user", "tok", "123") == SignFileURL("a", "write", "user", "tok", "") {
		t.Fatal("expiration must change the signature")
	}
	if SignFileURL("a", "read", "", "tok", "") == SignFileURL("a", "write", "", "tok", "") {
		t.Fatal("operation must change the signature")
	}
}
