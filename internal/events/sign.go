package events

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"strings"
)

// Headers of a delivery, as E2B names them.
const (
	HeaderWebhookID        = "e2b-webhook-id"
	HeaderDeliveryID       = "e2b-delivery-id"
	HeaderSignatureVersion = "e2b-signature-version"
	HeaderSignature        = "e2b-signature"
)

// SignatureVersion is the only signing scheme, E2B's "v1".
const SignatureVersion = "v1"

// Sign is E2B's webhook signature: SHA-256 of the secret followed by the
// raw body, base64 without its trailing '=' padding. (Not an HMAC: that
// is what E2B's receivers verify, and warren's must verify the same.)
func Sign(secret string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(secret))
	h.Write(body)
	return strings.TrimRight(base64.StdEncoding.EncodeToString(h.Sum(nil)), "=")
}

// Verify reports whether signature is Sign(secret, body), in constant time.
func Verify(secret string, body []byte, signature string) bool {
	return subtle.ConstantTimeCompare([]byte(Sign(secret, body)), []byte(signature)) == 1
}
