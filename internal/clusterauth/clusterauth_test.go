package clusterauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

const secret = "0123456789abcdef0123456789abcdef"

func TestNewRefusesShortSecrets(t *testing.T) {
	for _, s := range []string{"", "short", strings.Repeat(" ", 40), secret[:MinSecretLen-1]} {
		if _, err := New(s, nil); !errdefs.IsInvalidArgument(err) {
			t.Errorf("New(%q) = %v, want an invalid-argument error", s, err)
		}
	}
	if _, err := New("  "+secret+"\n", nil); err != nil {
		t.Errorf("a secret read from a file with its newline: %v", err)
	}
}

// TestVerify: what a peer signed is accepted, with the key hash it vouches
// for; anything missing, malformed, signed with another secret, changed on
// the way or outside MaxSkew is refused as unauthenticated.
func TestVerify(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	keyHash := apikey.Hash("e2b_0123456789012345678901234567890123456789")
	sign := func(at time.Time, sec, method, target, hash string) *http.Request {
		s, err := New(sec, func() time.Time { return at })
		if err != nil {
			t.Fatal(err)
		}
		out := httptest.NewRequest(method, "http://node:3000"+target, nil)
		s.Sign(out, hash)
		return out
	}
	// received turns a signed outgoing request into what the server reads.
	received := func(out *http.Request, method, target string) *http.Request {
		in := httptest.NewRequest(method, target, nil)
		in.Header = out.Header.Clone()
		return in
	}
	withHeader := func(v string) *http.Request {
		in := httptest.NewRequest("GET", "/sandboxes/x", nil)
		if v != "" {
			in.Header.Set(Header, v)
		}
		return in
	}
	const target = "/sandboxes/sb1/logs?start=5&limit=10"
	for _, tc := range []struct {
		name     string
		in       *http.Request
		wantHash string
		wantErr  string // "" accepted
	}{
		{"signed with a key", received(sign(t0, secret, "GET", target, keyHash), "GET", target), keyHash, ""},
		{"signed without a key", received(sign(t0, secret, "GET", "/internal/layers/abc", ""), "GET", "/internal/layers/abc"), "", ""},
		{"just inside the skew, late", received(sign(t0.Add(-MaxSkew), secret, "GET", target, keyHash), "GET", target), keyHash, ""},
		{"just inside the skew, early", received(sign(t0.Add(MaxSkew), secret, "GET", target, keyHash), "GET", target), keyHash, ""},
		{"missing", withHeader(""), "", "missing cluster credential"},
		{"garbage", withHeader("Bearer e2b_x"), "", "malformed"},
		{"other version", withHeader("v2.1800000000..abc"), "", "malformed"},
		{"bad time", withHeader("v1.soon..abc"), "", "malformed"},
		{"bad key hash", withHeader("v1.1800000000.e2b_secret.abc"), "", "malformed"},
		{"other secret", received(sign(t0, strings.Repeat("x", 32), "GET", target, keyHash), "GET", target), "", "wrong cluster credential"},
		{"other method", received(sign(t0, secret, "GET", target, keyHash), "DELETE", target), "", "wrong cluster credential"},
		{"other path", received(sign(t0, secret, "GET", target, keyHash), "GET", "/sandboxes/sb2/logs?start=5&limit=10"), "", "wrong cluster credential"},
		{"other query", received(sign(t0, secret, "GET", target, keyHash), "GET", "/sandboxes/sb1/logs?start=0&limit=10"), "", "wrong cluster credential"},
		{"other key", func() *http.Request {
			in := received(sign(t0, secret, "GET", target, keyHash), "GET", target)
			in.Header.Set(Header, strings.Replace(in.Header.Get(Header), keyHash, apikey.Hash("another"), 1))
			return in
		}(), "", "wrong cluster credential"},
		{"key dropped", func() *http.Request {
			in := received(sign(t0, secret, "GET", target, keyHash), "GET", target)
			in.Header.Set(Header, strings.Replace(in.Header.Get(Header), keyHash, "", 1))
			return in
		}(), "", "wrong cluster credential"},
		{"stale", received(sign(t0.Add(-MaxSkew-time.Second), secret, "GET", target, keyHash), "GET", target), "", "stale cluster credential"},
		{"from the future", received(sign(t0.Add(MaxSkew+time.Second), secret, "GET", target, keyHash), "GET", target), "", "stale cluster credential"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(secret, func() time.Time { return t0 })
			if err != nil {
				t.Fatal(err)
			}
			hash, err := s.Verify(tc.in)
			if tc.wantErr == "" {
				if err != nil || hash != tc.wantHash {
					t.Fatalf("Verify = %q, %v; want %q accepted", hash, err, tc.wantHash)
				}
				return
			}
			if !errors.Is(err, errdefs.ErrUnauthenticated) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Verify = %q, %v; want unauthenticated: %s", hash, err, tc.wantErr)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error tells the secret: %v", err)
			}
		})
	}
}
