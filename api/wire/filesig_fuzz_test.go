package wire

import (
	"net/http"
	"net/url"
	"testing"
)

// FuzzFileURLSignedBy parses arbitrary query strings as the proxy does for a
// header-less /files URL. SignedBy must hold exactly when the query's
// signature is the one Sign gives for its fields, a signature must survive
// being put in a URL and read back, and it must fail for another token or
// the other operation.
func FuzzFileURLSignedBy(f *testing.F) {
	good := url.Values{"path": {"/home/user/a.txt"}, "username": {"user"}, "signature_expiration": {"1900000000"}}
	good.Set("signature", SignFileURL("/home/user/a.txt", "read", "user", "tok", "1900000000"))
	f.Add(good.Encode(), http.MethodGet, "tok")
	f.Add(good.Encode(), http.MethodPost, "tok")
	f.Add("path=%2F&signature=v1_&signature=v1_x", http.MethodGet, "")
	f.Add("path=a:b&username=c:d&signature=v1_AAAA", http.MethodPost, "t:t")
	f.Add("%zz;&&==", "PUT", "tok")

	f.Fuzz(func(t *testing.T, rawQuery, method, token string) {
		q, _ := url.ParseQuery(rawQuery) // the proxy uses what parses
		op := "read"
		if method == http.MethodPost {
			op = "write"
		}
		want := SignFileURL(q.Get("path"), op, q.Get("username"), token, q.Get("signature_expiration"))
		if got := FileURLSignedBy(q, method, token); got != (q.Get("signature") == want) {
			t.Fatalf("SignedBy = %v for signature %q, want it %v (expected %q)", got, q.Get("signature"), !got, want)
		}

		// A URL the SDK builds with the right signature is accepted.
		q.Set("signature", want)
		back, err := url.ParseQuery(q.Encode())
		if err != nil {
			t.Fatalf("re-parsing an encoded query: %v", err)
		}
		if !FileURLSignedBy(back, method, token) {
			t.Fatalf("a correctly signed query %q is refused", q.Encode())
		}
		if FileURLSignedBy(back, method, token+"x") {
			t.Fatal("a signature passes with another token")
		}
		other := http.MethodPost
		if op == "write" {
			other = http.MethodGet
		}
		if FileURLSignedBy(back, other, token) {
			t.Fatalf("a %s signature passes for %s", op, other)
		}
	})
}
