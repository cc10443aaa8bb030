package filesig

import "testing"

func TestSign(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		path, op, user, tok, expr string
		want                      string
	}{
		// Vector computed independently with sha256sum and base64.
		{"read, no user", "hello.txt", "read", "", "tok", "", "v1_dEkXrS/Y6p/Op9rMpEpzXeRJ5bBL0LYkjrRJr9/Zz44"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sign(tc.path, tc.op, tc.user, tc.tok, tc.expr); got != tc.want {
				t.Fatalf("Sign = %q, want %q", got, tc.want)
			}
		})
	}
	if Sign("a", "write", "user", "tok", "123") == Sign("a", "write", "user", "tok", "") {
		t.Fatal("expiration must change the signature")
	}
	if Sign("a", "read", "", "tok", "") == Sign("a", "write", "", "tok", "") {
		t.Fatal("operation must change the signature")
	}
}
