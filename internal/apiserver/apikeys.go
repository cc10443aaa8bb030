package apiserver

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/api/rest"
	"github.com/warren-sandbox/warren/internal/apikey"
	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

// maxKeyName bounds a key's name.
const maxKeyName = 256

// listKeys serves GET /api-keys: the team's keys (every key for the
// admin), revoked ones left out.
func (s *Server) listKeys(w http.ResponseWriter, r *http.Request) {
	all, err := s.opts.Store.ListAPIKeys(r.Context())
	if err != nil {
		fail(w, r, err)
		return
	}
	out := []rest.TeamAPIKey{}
	for _, k := range all {
		if k.RevokedAt == nil && owns(r, k.TeamID) {
			out = append(out, toKeyJSON(k))
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// createKey serves POST /api-keys: a key of the caller's team, never an
// admin one, with at most the caller's own scopes.
func (s *Server) createKey(w http.ResponseWriter, r *http.Request) {
	var body rest.NewTeamAPIKey
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	if err := checkKeyName(body.Name); err != nil {
		fail(w, r, err)
		return
	}
	ttl, asked, wantTeam := deref(body.TTLSeconds), deref(body.Scopes), deref(body.Team)
	if ttl < 0 {
		fail(w, r, invalid("ttlSeconds must not be negative"))
		return
	}
	scopes, err := grantable(principal(r), asked)
	if err != nil {
		fail(w, r, err)
		return
	}
	team := teamOf(r)
	if wantTeam != "" && wantTeam != team {
		if !isAdmin(r) {
			fail(w, r, errdefs.New(errdefs.ErrPermissionDenied, "only the admin key makes keys for another team"))
			return
		}
		team = wantTeam
	}
	secret, rec, err := apikey.Create(apikey.Spec{Name: body.Name, Team: team, Scopes: scopes,
		TTL: time.Duration(ttl) * time.Second})
	if err != nil {
		fail(w, r, invalid(err.Error()))
		return
	}
	if err := s.opts.Store.CreateAPIKey(r.Context(), rec); err != nil {
		fail(w, r, err)
		return
	}
	k := toKeyJSON(rec)
	writeJSON(w, http.StatusCreated, rest.CreatedTeamAPIKey{ID: k.ID, Name: k.Name, Mask: k.Mask, CreatedAt: k.CreatedAt,
		Team: k.Team, Scopes: k.Scopes, ExpiresAt: k.ExpiresAt, Key: secret})
}

// grantable is the scopes a key made by k gets: what was asked, which must
// be among k's own; nothing asked gives k's own.
func grantable(k *store.APIKey, asked []string) ([]string, error) {
	if len(asked) == 0 {
		return slices.Clone(k.Scopes), nil
	}
	for _, s := range asked {
		if !slices.Contains(apikey.Scopes, s) {
			return nil, invalid(fmt.Sprintf("unknown scope %q (scopes: %s)", s, strings.Join(apikey.Scopes, ", ")))
		}
		if len(k.Scopes) > 0 && !slices.Contains(k.Scopes, s) {
			return nil, errdefs.New(errdefs.ErrPermissionDenied, fmt.Sprintf("this API key cannot grant the scope %s, which it does not have", s))
		}
	}
	return slices.Clone(asked), nil
}

// updateKey serves PATCH /api-keys/{apiKeyID}: a new name.
func (s *Server) updateKey(w http.ResponseWriter, r *http.Request) {
	var body rest.UpdateTeamAPIKey
	if err := decode(r, &body, false); err != nil {
		fail(w, r, err)
		return
	}
	if err := checkKeyName(body.Name); err != nil {
		fail(w, r, err)
		return
	}
	k, err := s.teamKey(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	if err := s.opts.Store.RenameAPIKey(r.Context(), k.ID, body.Name); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// deleteKey serves DELETE /api-keys/{apiKeyID}: the key stops working
// at once (it is kept, revoked, for the record).
func (s *Server) deleteKey(w http.ResponseWriter, r *http.Request) {
	k, err := s.teamKey(r)
	if err != nil {
		fail(w, r, err)
		return
	}
	if err := s.opts.Store.RevokeAPIKey(r.Context(), k.ID); err != nil {
		fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// teamKey finds the active key {apiKeyID} of the caller's team.
func (s *Server) teamKey(r *http.Request) (*store.APIKey, error) {
	id := r.PathValue("apiKeyID")
	all, err := s.opts.Store.ListAPIKeys(r.Context())
	if err != nil {
		return nil, err
	}
	for _, k := range all {
		if k.ID == id && k.RevokedAt == nil && owns(r, k.TeamID) {
			return k, nil
		}
	}
	return nil, errdefs.New(errdefs.ErrNotFound, fmt.Sprintf("API key '%s' not found", id))
}

func checkKeyName(name string) error {
	if strings.TrimSpace(name) == "" || len(name) > maxKeyName {
		return invalid(fmt.Sprintf("name must be 1 to %d characters", maxKeyName))
	}
	return nil
}

func toKeyJSON(k *store.APIKey) rest.TeamAPIKey {
	prefix, body, _ := strings.Cut(k.Mask, "…")
	m := rest.KeyMask{Prefix: apikey.Prefix, ValueLength: 40, MaskedValuePrefix: strings.TrimPrefix(prefix, apikey.Prefix), MaskedValueSuffix: body}
	scopes := k.Scopes
	if scopes == nil {
		scopes = []string{}
	}
	return rest.TeamAPIKey{ID: k.ID, Name: k.Name, Mask: m, CreatedAt: k.CreatedAt, Team: store.TeamOf(k.TeamID), Scopes: scopes, ExpiresAt: k.ExpiresAt}
}
