// Package apikey generates, checks and hashes warren API keys, and makes the
// short random ids used as record keys.
//
// A key looks like E2B's: "e2b_" followed by 40 lowercase hex characters, so
// the official SDKs accept it unchanged. Only Hash(key) is ever stored; Mask
// gives a form that is safe to show in lists and logs.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// Prefix starts every API key.
const Prefix = "e2b_"

// secretBytes is the random part of a key: 160 bits, 40 hex characters.
const secretBytes = 20

// keyLen is the full length of a well-formed key.
const keyLen = len(Prefix) + 2*secretBytes

// Generate returns a new random API key.
func Generate() (string, error) {
	var b [secretBytes]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generating api key: %w", err)
	}
	return Prefix + hex.EncodeToString(b[:]), nil
}

// Valid reports whether key has the form ^e2b_[0-9a-f]{40}$. Callers check it
// before hashing so malformed input is rejected without a store lookup.
func Valid(key string) bool {
	if len(key) != keyLen || !strings.HasPrefix(key, Prefix) {
		return false
	}
	for i := len(Prefix); i < len(key); i++ {
		c := key[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Hash returns the hex sha256 of key, the form kept in the store. A fast hash
// is enough because keys carry 160 random bits; there is nothing to brute-force.
func Hash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// Verify reports whether key hashes to hash. The comparison takes constant
// time so a caller checking a presented key against a known hash leaks nothing
// through timing.
func Verify(key, hash string) bool {
	return Equal(Hash(key), hash)
}

// Equal compares two secrets (keys, hashes, access tokens) in constant time.
func Equal(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// maskKeep is how many characters of the secret Mask shows at each end.
const maskKeep = 4

// Mask returns a form of key that is safe to display, e.g. "e2b_ab12…9f0e".
// Input too short to hide anything comes back as just the prefix and "…", so
// a mistyped or truncated secret is never echoed whole.
func Mask(key string) string {
	prefix := ""
	body := key
	if strings.HasPrefix(key, Prefix) {
		prefix, body = Prefix, key[len(Prefix):]
	}
	// Show at most half of the body, so short input stays mostly hidden.
	if len(body) < 4*maskKeep {
		return prefix + "…"
	}
	return prefix + body[:maskKeep] + "…" + body[len(body)-maskKeep:]
}

// idAlphabet is the character set of record ids: safe in DNS labels (sandbox
// hostnames are "<port>-<id>.<domain>"), URLs and file names.
const idAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

// idLen gives about 103 bits of randomness, matching E2B's 20-character ids.
const idLen = 20

// NewID returns a random id of 20 characters from [a-z0-9].
func NewID() string {
	// 252 is the largest multiple of 36 that fits in a byte; rejecting bytes
	// at or above it keeps every character equally likely.
	const limit = 256 - 256%len(idAlphabet)
	out := make([]byte, 0, idLen)
	var buf [32]byte
	for len(out) < idLen {
		// crypto/rand.Read never fails (it crashes the program instead),
		// so there is no error to return.
		_, _ = rand.Read(buf[:])
		for _, b := range buf {
			if int(b) >= limit || len(out) == idLen {
				continue
			}
			out = append(out, idAlphabet[int(b)%len(idAlphabet)])
		}
	}
	return string(out)
}

// FromRequest is the API key r carries: X-API-KEY, or Authorization:
// Bearer; "" when none.
func FromRequest(r *http.Request) string {
	if key := r.Header.Get("X-API-KEY"); key != "" {
		return key
	}
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return key
}
