package proxy

import "testing"

func TestParseHost(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, host, domain string
		id                 string
		port               int
		ok                 bool
	}{
		{"envd", "49983-abc123.localhost", "localhost", "abc123", 49983, true},
		{"with listen port", "8080-abc123.localhost:3000", "localhost", "abc123", 8080, true},
		{"upper case", "8080-ABC123.Example.COM", "example.com", "abc123", 8080, true},
		{"extra label part", "8080-abc123-x.example.com", "example.com", "abc123", 8080, true},
		{"other domain", "8080-abc123.evil.com", "example.com", "", 0, false},
		{"api host", "localhost:3000", "localhost", "", 0, false},
		{"no port", "abc123.localhost", "localhost", "", 0, false},
		{"port out of range", "70000-abc.localhost", "localhost", "", 0, false},
		{"bad id", "80-ab_c.localhost", "localhost", "", 0, false},
		{"empty domain", "80-abc.", "", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, port, ok := parseHost(tc.host, tc.domain)
			if id != tc.id || port != tc.port || ok != tc.ok {
				t.Fatalf("parseHost(%q, %q) = %q, %d, %v; want %q, %d, %v", tc.host, tc.domain, id, port, ok, tc.id, tc.port, tc.ok)
			}
		})
	}
}

func TestSign(t *testing.T) {
	t.Parallel()
	// Computed independently: printf 'hello.txt:read::tok' | sha256sum | xxd -r -p | base64 | tr -d =
	got := Sign("hello.txt", "read", "", "tok", "")
	if got != "v1_dEkXrS/Y6p/Op9rMpEpzXeRJ5bBL0LYkjrRJr9/Zz44" {
		t.Fatalf("Sign = %q", got)
	}
	if Sign("a", "write", "user", "tok", "123") == Sign("a", "write", "user", "tok", "") {
		t.Fatal("expiration must change the signature")
	}
}
