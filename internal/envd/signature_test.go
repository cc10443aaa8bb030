package envd_test

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/warren-sandbox/warren/internal/envd"
	"github.com/warren-sandbox/warren/internal/envd/envdtest"
)

func TestFileSignatureAlgorithm(t *testing.T) {
	t.Parallel()
	// Recomputed independently from the protocol text.
	sum := sha256.Sum256([]byte("hello.txt:read::tok:1700000000"))
	want := "v1_" + strings.TrimRight(base64.StdEncoding.EncodeToString(sum[:]), "=")
	if got := envd.FileSignature("hello.txt", envd.OpRead, "", "tok", "1700000000"); got != want {
		t.Errorf("FileSignature = %s, want %s", got, want)
	}
	sum = sha256.Sum256([]byte("/a:write:user:tok"))
	want = "v1_" + strings.TrimRight(base64.StdEncoding.EncodeToString(sum[:]), "=")
	if got := envd.FileSignature("/a", envd.OpWrite, "user", "tok", ""); got != want {
		t.Errorf("FileSignature = %s, want %s", got, want)
	}
}

// fileQuery builds a /files URL path with the given (optional) parameters.
func fileQuery(path, user, signature, exp string) string {
	v := url.Values{"path": {path}}
	if user != "" {
		v.Set("username", user)
	}
	if signature != "" {
		v.Set("signature", signature)
	}
	if exp != "" {
		v.Set("signature_expiration", exp)
	}
	return "/files?" + v.Encode()
}

func TestSignedFileURLs(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	initEnvd(t, e, `{"accessToken":"tok"}`, nil)
	if err := os.WriteFile(e.Home+"/s.txt", []byte("signed"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10)
	past := strconv.FormatInt(time.Now().Add(-time.Minute).Unix(), 10)
	sig := func(path, op, user, exp string) string { return envd.FileSignature(path, op, user, "tok", exp) }
	tests := []struct {
		name    string
		method  string
		query   string
		headers map[string]string
		status  int
	}{
		{"read signed", http.MethodGet, fileQuery("s.txt", "", sig("s.txt", "read", "", ""), ""), nil, 200},
		{"read signed with user", http.MethodGet, fileQuery("s.txt", envdtest.TestUser, sig("s.txt", "read", envdtest.TestUser, ""), ""), nil, 200},
		{"read signed, unexpired", http.MethodGet, fileQuery("s.txt", "", sig("s.txt", "read", "", future), future), nil, 200},
		{"expired", http.MethodGet, fileQuery("s.txt", "", sig("s.txt", "read", "", past), past), nil, 401},
		{"expiration tampered", http.MethodGet, fileQuery("s.txt", "", sig("s.txt", "read", "", past), future), nil, 401},
		{"forged", http.MethodGet, fileQuery("s.txt", "", "v1_forged", ""), nil, 401},
		{"signed with another token", http.MethodGet, fileQuery("s.txt", "", envd.FileSignature("s.txt", "read", "", "other", ""), ""), nil, 401},
		{"write signature used to read", http.MethodGet, fileQuery("s.txt", "", sig("s.txt", "write", "", ""), ""), nil, 401},
		{"path differs from signed", http.MethodGet, fileQuery("/etc/passwd", "", sig("s.txt", "read", "", ""), ""), nil, 401},
		{"bad expiration", http.MethodGet, fileQuery("s.txt", "", sig("s.txt", "read", "", ""), "soon"), nil, 401},
		{"header token", http.MethodGet, fileQuery("s.txt", "", "", ""), map[string]string{"X-Access-Token": "tok"}, 200},
		{"wrong header token beats a valid signature", http.MethodGet, fileQuery("s.txt", "", sig("s.txt", "read", "", ""), ""), map[string]string{"X-Access-Token": "bad"}, 401},
		{"upload signed", http.MethodPost, fileQuery("up.txt", "", sig("up.txt", "write", "", future), future), nil, 200},
		{"upload with read signature", http.MethodPost, fileQuery("up.txt", "", sig("up.txt", "read", "", ""), ""), nil, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var body *strings.Reader
			if tt.method == http.MethodPost {
				body = strings.NewReader("uploaded")
			} else {
				body = strings.NewReader("")
			}
			code, got, _ := do(t, e, tt.method, tt.query, body, tt.headers)
			if code != tt.status {
				t.Fatalf("status = %d (%s), want %d", code, got, tt.status)
			}
			if code == 401 && !strings.HasPrefix(got, `{"code":401,"message":`) {
				t.Errorf("body = %s", got)
			}
		})
	}
}

func TestFilesWithoutToken(t *testing.T) {
	t.Parallel()
	e := envdtest.New(t)
	if err := os.WriteFile(e.Home+"/open.txt", []byte("open"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No token set: no check at all, even for a junk signature.
	code, body, _ := do(t, e, http.MethodGet, "/files?path=open.txt&signature=junk", nil, nil)
	if code != 200 || body != "open" {
		t.Errorf("= %d %s", code, body)
	}
}
