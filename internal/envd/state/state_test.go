package state

import (
	"errors"
	"testing"

	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/errdefs"
)

func TestApply(t *testing.T) {
	t.Parallel()
	s := New(users.DB{})
	if !s.CheckToken("") || !s.CheckToken("anything") {
		t.Error("no token set: every value must pass")
	}
	if s.DefaultUserName() != "root" {
		t.Errorf("default user before init = %q", s.DefaultUserName())
	}
	tok, user, wd := "t1", "user", "/work"
	s.Apply(Init{AccessToken: &tok, EnvVars: map[string]string{"A": "1"}, DefaultUser: &user, DefaultWorkdir: &wd})
	empty := ""
	s.Apply(Init{AccessToken: &empty, EnvVars: map[string]string{"B": "2"}, DefaultUser: &empty})
	if !s.CheckToken("t1") || s.CheckToken("") || s.CheckToken("t2") {
		t.Error("token check wrong after an init without a token")
	}
	if env := s.EnvVars(); env["A"] != "1" || env["B"] != "2" {
		t.Errorf("env = %v", env)
	}
	if s.DefaultUserName() != "user" || s.DefaultWorkdir() != "/work" {
		t.Errorf("user %q workdir %q", s.DefaultUserName(), s.DefaultWorkdir())
	}
	s.EnvVars()["A"] = "mutated"
	if s.EnvVars()["A"] != "1" {
		t.Error("EnvVars returned the internal map")
	}
}

func TestUserUnknownIsUnauthenticated(t *testing.T) {
	t.Parallel()
	s := New(users.DB{PasswdPath: t.TempDir() + "/missing"})
	if _, err := s.User("ghost"); !errors.Is(err, errdefs.ErrUnauthenticated) {
		t.Errorf("err = %v", err)
	}
}
