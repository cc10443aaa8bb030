package wire

import (
	"time"
)

// The sandbox API's shapes not yet generated into api/rest (E2B's
// OpenAPI names in the comments), shared by warren's server and its Go
// clients.

// Image is an imported image (warren: GET /images).
type Image struct {
	Ref      string    `json:"ref"`
	Digest   string    `json:"digest"`
	Layers   int       `json:"layers"`
	Size     int64     `json:"sizeBytes"`
	Imported time.Time `json:"importedAt"`
}

// TeamAPIKey is E2B's TeamAPIKey (GET /api-keys), the secret masked.
type TeamAPIKey struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Mask      KeyMask    `json:"mask"`
	CreatedAt time.Time  `json:"createdAt"`
	CreatedBy *TeamUser  `json:"createdBy"`
	LastUsed  *time.Time `json:"lastUsed"`
	// warren's extensions: the key's team, scopes (empty: all) and expiry.
	Team      string     `json:"team"`
	Scopes    []string   `json:"scopes"`
	ExpiresAt *time.Time `json:"expiresAt,omitempty"`
}

// CreatedTeamAPIKey answers POST /api-keys: the one time the secret is
// shown.
type CreatedTeamAPIKey struct {
	TeamAPIKey
	Key string `json:"key"`
}

// KeyMask is E2B's IdentifierMaskingDetails.
type KeyMask struct {
	Prefix            string `json:"prefix"`
	ValueLength       int    `json:"valueLength"`
	MaskedValuePrefix string `json:"maskedValuePrefix"`
	MaskedValueSuffix string `json:"maskedValueSuffix"`
}

// NewTeamAPIKey is the body of POST /api-keys; Scopes and TTLSeconds are
// warren's (a key may only hand out scopes it has itself).
type NewTeamAPIKey struct {
	Name string `json:"name"`
	// Team is honoured for the admin key only, which makes keys for any
	// team (a team is made when first named).
	Team       string   `json:"team,omitempty"`
	Scopes     []string `json:"scopes,omitempty"`
	TTLSeconds int64    `json:"ttlSeconds,omitempty"`
}

// UpdateTeamAPIKey is the body of PATCH /api-keys/{apiKeyID}.
type UpdateTeamAPIKey struct {
	Name string `json:"name"`
}
