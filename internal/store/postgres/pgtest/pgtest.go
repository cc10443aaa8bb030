// Package pgtest gives tests a throwaway Postgres: Debian's server
// (initdb, pg_ctl) started in a temporary directory, listening only on a
// unix socket there, with fsync off, and stopped when the test ends. As
// root it runs the server as the unprivileged postgres (or nobody)
// account, since Postgres refuses root; otherwise as the test's own user.
// WARREN_TEST_POSTGRES=postgres://… uses that database instead.
//
// Tests that cannot get a server skip, with the reason, so `go test ./...`
// passes on a machine without Postgres. Fault tests stop and start the
// server (Stop, Resume) and reach it over TCP from a network namespace of
// their own (Options.Listen, URLOver).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
)

// Env names an external database to use instead of starting one.
const Env = "WARREN_TEST_POSTGRES"

// BinDir is where Debian's postgresql package puts the server's programs.
var BinDir = "/usr/lib/postgresql/15/bin"

// Server is a Postgres the test may create databases in.
type Server struct {
	url      string                     // the admin connection
	external bool                       // from Env: leave nothing behind in it
	listen   string                     // Options.Listen
	data     string                     // the data directory
	run      func(args ...string) error // runs a server program as its user
}

// Options vary the server Start makes.
type Options struct {
	// Listen is an IP address to take TCP connections on (port 5432),
	// besides the unix socket; it must exist before Start.
	Listen string
	// Trust lists the networks (CIDR) whose TCP clients connect without
	// a password.
	Trust []string
}

// Start returns a Postgres for t: the one Env names, or a new server
// stopped in t.Cleanup. It skips t when neither is possible.
func Start(t testing.TB) *Server { return StartWith(t, Options{}) }

// StartWith is Start with o; with Env set, o is ignored.
func StartWith(t testing.TB, o Options) *Server {
	t.Helper()
	if u := os.Getenv(Env); u != "" {
		return &Server{url: u, external: true}
	}
	for _, bin := range []string{"initdb", "pg_ctl", "postgres"} {
		if _, err := os.Stat(filepath.Join(BinDir, bin)); err != nil {
			t.Skipf("skipping: no Postgres server (%v); install Debian's postgresql or set %s", err, Env)
		}
	}
	cred, err := serverUser()
	if err != nil {
		t.Skipf("skipping: cannot run Postgres unprivileged: %v", err)
	}
	dir := tempDir(t, cred)
	run := func(args ...string) error {
		cmd := exec.Command(filepath.Join(BinDir, args[0]), args[1:]...)
		cmd.Dir = dir // readable by the server's user, unlike the test's
		log, err := os.OpenFile(filepath.Join(dir, args[0]+".out"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer log.Close()
		// A file, not a pipe: pg_ctl leaves a daemon that would hold a
		// pipe open and keep Wait from returning.
		cmd.Stdout, cmd.Stderr = log, log
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		if err := cmd.Run(); err != nil {
			out, _ := os.ReadFile(log.Name())
			return fmt.Errorf("%s: %w\n%s", args[0], err, out)
		}
		return nil
	}
	data := filepath.Join(dir, "data")
	if err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	if err := trust(data, o.Trust); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	opts := fmt.Sprintf("-c listen_addresses='%s' -k %s -c fsync=off -c synchronous_commit=off "+
		"-c full_page_writes=off -c max_connections=300", o.Listen, dir)
	s := &Server{listen: o.Listen, data: data}
	s.run = func(args ...string) error {
		if args[0] == "pg_ctl" && args[1] == "start" {
			args = append(args, "-l", filepath.Join(dir, "server.log"), "-o", opts)
		}
		return run(args...)
	}
	if err := s.run("pg_ctl", "start", "-w", "-t", "60", "-D", data); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	// pg_ctl stop finds the server by the PID file in its data directory.
	t.Cleanup(func() {
		if err := run("pg_ctl", "stop", "-w", "-m", "immediate", "-D", data); err != nil && !stopped(data) {
			t.Errorf("pgtest: %v", err)
		}
	})
	q := url.Values{"host": {dir}, "sslmode": {"disable"}}
	s.url = "postgres://postgres@/postgres?" + q.Encode()
	return s
}

// trust lets clients from the networks cidrs connect over TCP.
func trust(data string, cidrs []string) error {
	f, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	for _, c := range cidrs {
		if _, err := fmt.Fprintf(f, "host all all %s trust\n", c); err != nil {
			f.Close()
			return err
		}
	}
	return f.Close()
}

// Stop shuts the server down as an operator's restart does (pg_ctl's
// fast mode: sessions are ended, clients see their connections close),
// until Resume. It skips t on an external server, which it cannot stop.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if s.external {
		t.Skipf("skipping: cannot stop the external Postgres of %s", Env)
	}
	if err := s.run("pg_ctl", "stop", "-w", "-m", "fast", "-D", s.data); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// Resume starts the server Stop stopped, on the same data.
func (s *Server) Resume(t testing.TB) {
	t.Helper()
	if err := s.run("pg_ctl", "start", "-w", "-t", "60", "-D", s.data); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
}

// URLOver is database url (from NewDatabase) reached over TCP at
// Options.Listen instead of the unix socket.
func (s *Server) URLOver(t testing.TB, dbURL string) string {
	t.Helper()
	if s.listen == "" {
		t.Fatal("pgtest: URLOver of a server without Options.Listen")
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	q := u.Query()
	q.Set("host", s.listen)
	u.RawQuery = q.Encode()
	return u.String()
}

// stopped reports that the server of data is not running (a test
// stopped it and did not resume it): no postmaster.pid.
func stopped(data string) bool {
	_, err := os.Stat(filepath.Join(data, "postmaster.pid"))
	return errors.Is(err, os.ErrNotExist)
}

// serverUser is who runs the server: nil (the test's user) unless the test
// runs as root, which Postgres refuses.
func serverUser() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	var errs []string
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			errs = append(errs, err.Error())
			continue
		}
		uid, _ := strconv.ParseUint(u.Uid, 10, 32)
		gid, _ := strconv.ParseUint(u.Gid, 10, 32)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}, nil
	}
	return nil, fmt.Errorf("running as root and no unprivileged account: %s", strings.Join(errs, "; "))
}

// tempDir makes a directory the server's user owns under the system's
// temporary directory: t.TempDir's parents are private to the test's user,
// and its long path would overflow a unix socket's name.
func tempDir(t testing.TB, cred *syscall.Credential) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Skipf("skipping: cannot hand %s to uid %d: %v", dir, cred.Uid, err)
		}
	}
	return dir
}

// NewDatabase returns the URL of a new, empty schema of its own (its
// search_path), for one store under test. Schemas are much cheaper than
// databases, which matters for a suite that opens a store per case.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	s.exec(t, "CREATE SCHEMA "+name)
	if s.external {
		t.Cleanup(func() { s.exec(t, "DROP SCHEMA "+name+" CASCADE") })
	}
	u, err := url.Parse(s.url)
	if err != nil {
		t.Fatalf("pgtest: parsing %s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", name)
	// Suites open a store per parallel case: a small pool each keeps them
	// all under the server's connection limit.
	q.Set("pool_max_conns", "4")
	u.RawQuery = q.Encode()
	return u.String()
}

// exec runs one statement on the admin connection.
func (s *Server) exec(t testing.TB, sql string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.url)
	if err != nil {
		t.Fatalf("pgtest: connecting: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatalf("pgtest: %s: %v", sql, err)
	}
}
