package apikey

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/store"
)

// The scopes a key may be limited to. A key without scopes may do all of
// this; E2B's keys have no scopes, so that is the default.
const (
	ScopeSandboxesRead  = "sandboxes:read"  // list, inspect, metrics, logs
	ScopeSandboxesWrite = "sandboxes:write" // create, kill, pause, resume, snapshot, fork, network
	ScopeTemplatesRead  = "templates:read"  // list and inspect templates, builds, tags, images
	ScopeTemplatesWrite = "templates:write" // build, tag, delete templates; import images
	ScopeKeys           = "keys"            // list, create, rename and revoke the team's keys
)

// Scopes lists every scope, in the order documentation shows them.
var Scopes = []string{ScopeSandboxesRead, ScopeSandboxesWrite, ScopeTemplatesRead, ScopeTemplatesWrite, ScopeKeys}

var teamName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// Spec is a key to make.
type Spec struct {
	Name   string
	Team   string // "" = store.DefaultTeam
	Admin  bool
	Scopes []string      // none = every scope
	TTL    time.Duration // 0 = never expires
}

// Create makes a key: the secret, shown once, and the record to store,
// which keeps only its hash and a mask.
func Create(spec Spec) (secret string, rec *store.APIKey, err error) {
	team := store.TeamOf(spec.Team)
	if !teamName.MatchString(team) {
		return "", nil, fmt.Errorf("team %q: use 1 to 63 lowercase letters, digits, '-' or '_'", team)
	}
	for _, s := range spec.Scopes {
		if !slices.Contains(Scopes, s) {
			return "", nil, fmt.Errorf("unknown scope %q (scopes: %s)", s, strings.Join(Scopes, ", "))
		}
	}
	if spec.TTL < 0 {
		return "", nil, fmt.Errorf("a key's lifetime must not be negative")
	}
	if secret, err = Generate(); err != nil {
		return "", nil, err
	}
	rec = Record(secret, spec)
	return secret, rec, nil
}

// Record is the stored form of secret as spec describes it.
func Record(secret string, spec Spec) *store.APIKey {
	now := time.Now().UTC()
	id := NewID()
	rec := &store.APIKey{
		ID: id, Name: spec.Name, Hash: Hash(secret), Mask: Mask(secret),
		Admin: spec.Admin, TeamID: store.TeamOf(spec.Team), CreatedAt: now,
	}
	if rec.Name == "" {
		rec.Name = "key-" + id
	}
	if len(spec.Scopes) > 0 {
		rec.Scopes = slices.Clone(spec.Scopes)
	}
	if spec.TTL > 0 {
		exp := now.Add(spec.TTL)
		rec.ExpiresAt = &exp
	}
	return rec
}

// Allows reports whether k may act with scope at time now: it is not
// expired, and it has no scopes or has this one.
func Allows(k *store.APIKey, scope string, now time.Time) bool {
	if k.ExpiresAt != nil && !now.Before(*k.ExpiresAt) {
		return false
	}
	return len(k.Scopes) == 0 || slices.Contains(k.Scopes, scope)
}

// Expired reports whether k has expired at now.
func Expired(k *store.APIKey, now time.Time) bool {
	return k.ExpiresAt != nil && !now.Before(*k.ExpiresAt)
}
