// Package state holds envd's mutable sandbox-wide settings: the access token,
// the global environment variables, the default user and the default workdir.
// POST /init sets them; every service reads them on each request, so a later
// /init (after a resume, say) takes effect at once.
package state

import (
	"crypto/subtle"
	"fmt"
	"maps"
	"sync"

	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

// DefaultUser is the user envd acts as until /init names another.
const DefaultUser = "root"

// Init is the part of the /init body that changes state. Nil or empty fields
// leave the current value alone.
type Init struct {
	AccessToken    *string
	EnvVars        map[string]string
	DefaultUser    *string
	DefaultWorkdir *string
}

// State is safe for concurrent use.
type State struct {
	// Users is the account database used for every user lookup.
	Users users.DB

	mu sync.RWMutex
	// mu guards token, envVars, defaultUser and defaultWorkdir.
	token          string
	envVars        map[string]string
	defaultUser    string
	defaultWorkdir string
}

// New returns a State with no token, no env vars and root as the default user.
func New(db users.DB) *State {
	return &State{Users: db, envVars: map[string]string{}, defaultUser: DefaultUser}
}

// Apply merges an /init request into the state. A token replaces the old one
// only when given; env vars are merged key by key, as E2B's envd does.
func (s *State) Apply(in Init) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if in.AccessToken != nil && *in.AccessToken != "" {
		s.token = *in.AccessToken
	}
	maps.Copy(s.envVars, in.EnvVars)
	if in.DefaultUser != nil && *in.DefaultUser != "" {
		s.defaultUser = *in.DefaultUser
	}
	if in.DefaultWorkdir != nil && *in.DefaultWorkdir != "" {
		s.defaultWorkdir = *in.DefaultWorkdir
	}
}

// Token returns the access token, "" when none was set.
func (s *State) Token() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.token
}

// CheckToken reports whether got is the access token. It is true for any
// value while no token is set, so an unsecured sandbox needs no header.
func (s *State) CheckToken(got string) bool {
	want := s.Token()
	if want == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

// EnvVars returns a copy of the global environment variables.
func (s *State) EnvVars() map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return maps.Clone(s.envVars)
}

// DefaultWorkdir returns the default working directory, "" when unset.
func (s *State) DefaultWorkdir() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.defaultWorkdir
}

// DefaultUserName returns the name of the user requests run as by default.
func (s *State) DefaultUserName() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.defaultUser
}

// User returns the named user, or the default user when name is "". Any
// failure is errdefs.ErrUnauthenticated: the SDK maps that to its
// authentication error, which is what E2B answers for a bad username.
func (s *State) User(name string) (*users.User, error) {
	if name == "" {
		name = s.DefaultUserName()
	}
	u, err := s.Users.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("invalid username %q: %w", name, errdefs.New(errdefs.ErrUnauthenticated, err.Error()))
	}
	return u, nil
}

// Resolve resolves p for user u with the current default workdir.
func (s *State) Resolve(p string, u *users.User) string {
	return users.ResolvePath(p, u, s.DefaultWorkdir())
}
