// Package envdtest runs a complete envd handler in-process for tests: a
// private account database (the running user as "tester", plus an
// unprivileged "sbuser" for root-only tests), a per-pid reaper, an httptest
// server and Connect clients speaking the JSON protocol the SDKs use.
package envdtest

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"connectrpc.com/connect"

	"github.com/warren-sandbox/warren/api/gen/filesystem/filesystemconnect"
	"github.com/warren-sandbox/warren/api/gen/process/processconnect"
	"github.com/warren-sandbox/warren/internal/envd"
	"github.com/warren-sandbox/warren/internal/envd/reaper"
	"github.com/warren-sandbox/warren/internal/envd/state"
	"github.com/warren-sandbox/warren/internal/envd/users"
	"github.com/warren-sandbox/warren/internal/log"
)

// Names of the accounts in the test database.
const (
	TestUser = "tester" // the uid running the tests
	SBUser   = "sbuser" // uid/gid 65534, supplementary group 4242 ("extra")
	SBUID    = 65534
	ExtraGID = 4242
)

// Env is one running envd.
type Env struct {
	Server *envd.Server
	HTTP   *httptest.Server
	// Client talks to HTTP over a transport of its own, with transparent
	// gzip switched off so tests see raw encodings.
	Client *http.Client
	Users  users.DB
	// Home is tester's home directory, SBHome sbuser's.
	Home, SBHome string
	// RunDir stands for the sandbox's /run/e2b.
	RunDir string
}

// New starts an envd whose default user is tester.
func New(t testing.TB) *Env {
	t.Helper()
	dir := t.TempDir()
	e := &Env{Home: filepath.Join(dir, "home", TestUser), SBHome: filepath.Join(dir, "home", SBUser), RunDir: filepath.Join(dir, "run", "e2b")}
	e.Users = writeAccounts(t, dir, e.Home, e.SBHome)

	r := reaper.New(false)
	ctx, cancel := context.WithCancel(context.Background())
	go r.Run(ctx)
	srv, err := envd.New(envd.Config{
		Users: e.Users, Reaper: r, ProcessRetention: time.Minute,
		Logger: slog.New(slog.DiscardHandler), RunDir: e.RunDir,
	})
	if err != nil {
		t.Fatalf("envd.New: %v", err)
	}
	name := TestUser
	srv.State().Apply(state.Init{DefaultUser: &name})
	e.Server = srv
	e.HTTP = httptest.NewServer(srv.Handler())
	tr := &http.Transport{DisableCompression: true}
	e.Client = &http.Client{Transport: tr}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		e.HTTP.CloseClientConnections()
		e.HTTP.Close()
		quiet := log.WithLogger(context.Background(), slog.New(slog.DiscardHandler))
		closeCtx, stop := context.WithTimeout(quiet, 5*time.Second)
		defer stop()
		srv.Close(closeCtx) // kills what a test left running, and reaps it
		cancel()
	})
	return e
}

func writeAccounts(t testing.TB, dir, home, sbHome string) users.DB {
	t.Helper()
	for _, d := range []string{home, sbHome} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		// t.TempDir's directories are 0700; sbuser must reach its home.
		for _, d := range []string{filepath.Dir(dir), dir, filepath.Dir(sbHome)} {
			if err := os.Chmod(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chown(sbHome, SBUID, SBUID); err != nil {
			t.Fatal(err)
		}
	}
	uid, gid := os.Geteuid(), os.Getegid()
	passwd := fmt.Sprintf("%s:x:%d:%d::%s:/bin/sh\n%s:x:%d:%d::%s:/bin/sh\n",
		TestUser, uid, gid, home, SBUser, SBUID, SBUID, sbHome)
	group := fmt.Sprintf("testers:x:%d:\nsbgroup:x:%d:\nextra:x:%d:%s\n", gid, SBUID, ExtraGID, SBUser)
	db := users.DB{PasswdPath: filepath.Join(dir, "passwd"), GroupPath: filepath.Join(dir, "group")}
	if err := os.WriteFile(db.PasswdPath, []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(db.GroupPath, []byte(group), 0o644); err != nil {
		t.Fatal(err)
	}
	return db
}

// ProcessClient returns a Connect+JSON client for process.Process.
func (e *Env) ProcessClient(opts ...connect.ClientOption) processconnect.ProcessClient {
	return processconnect.NewProcessClient(e.Client, e.HTTP.URL, append([]connect.ClientOption{connect.WithProtoJSON()}, opts...)...)
}

// FilesystemClient returns a Connect+JSON client for filesystem.Filesystem.
func (e *Env) FilesystemClient(opts ...connect.ClientOption) filesystemconnect.FilesystemClient {
	return filesystemconnect.NewFilesystemClient(e.Client, e.HTTP.URL, append([]connect.ClientOption{connect.WithProtoJSON()}, opts...)...)
}

// WithHeader is a client option setting a header on every request.
func WithHeader(key, value string) connect.ClientOption {
	return connect.WithInterceptors(headerInterceptor{key: key, value: value})
}

type headerInterceptor struct{ key, value string }

func (h headerInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		req.Header().Set(h.key, h.value)
		return next(ctx, req)
	}
}

func (h headerInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set(h.key, h.value)
		return conn
	}
}

func (h headerInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

// BasicUser is the Authorization value selecting user, as the SDKs send it.
func BasicUser(user string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"))
}

// RequireRoot skips t unless it runs as root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
}

// Eventually polls cond every 10ms until it is true or timeout passes.
func Eventually(t testing.TB, timeout time.Duration, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %s", timeout, fmt.Sprintf(format, args...))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// NoGoroutineLeak returns a check to defer: it polls until the goroutine
// count is back at (or below) the count when NoGoroutineLeak was called.
func NoGoroutineLeak(t testing.TB) func() {
	t.Helper()
	before := runtime.NumGoroutine()
	return func() {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			now := runtime.NumGoroutine()
			if now <= before {
				return
			}
			if time.Now().After(deadline) {
				buf := make([]byte, 1<<20)
				n := runtime.Stack(buf, true)
				t.Fatalf("goroutines: %d before, %d after\n%s", before, now, buf[:n])
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
