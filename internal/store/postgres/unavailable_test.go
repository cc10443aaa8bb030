package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
	"github.com/warren-sandbox/warren/internal/store/postgres/pgtest"
)

// TestStoreRestart stops the server under an open store and starts it
// again: meanwhile reads, writes and transactions fail as unavailable
// (503 at the edge), without naming the server's socket; afterwards the
// same store works again at the first attempt, though every connection
// it had was closed by the restart.
func TestStoreRestart(t *testing.T) {
	pg := pgtest.Start(t)
	s, err := Open(t.Context(), pg.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ops := []struct {
		name string
		op   func(ctx context.Context) error
	}{
		{"QueryRow", func(ctx context.Context) error {
			_, err := s.GetSandbox(ctx, "sb")
			return err
		}},
		{"Query", func(ctx context.Context) error {
			_, err := s.ListNodes(ctx)
			return err
		}},
		{"Exec", func(ctx context.Context) error {
			return s.PutNode(ctx, &store.Node{Name: "n", HeartbeatAt: time.Now()})
		}},
		{"transaction", func(ctx context.Context) error {
			return s.CreateEvent(ctx, &store.Event{ID: "ev-" + time.Now().Format("150405.000000000"),
				Type: store.EventCreated, SandboxID: "sb", Timestamp: time.Now()}, nil)
		}},
	}
	ctx := t.Context()
	if err := s.CreateSandbox(ctx, &store.Sandbox{ID: "sb"}); err != nil {
		t.Fatal(err)
	}
	for _, o := range ops { // every connection of the pool in use once
		if err := o.op(ctx); err != nil {
			t.Fatalf("%s before the restart: %v", o.name, err)
		}
	}
	pg.Stop(t)
	for _, o := range ops {
		err := o.op(ctx)
		if !errors.Is(err, errdefs.ErrUnavailable) {
			t.Errorf("%s with the server down: %v, want unavailable", o.name, err)
		} else if strings.Contains(err.Error(), "/") {
			t.Errorf("%s with the server down: %q names a path", o.name, err)
		}
	}
	pg.Resume(t)
	for _, o := range ops {
		if err := o.op(ctx); err != nil {
			t.Errorf("%s after the restart: %v", o.name, err)
		}
	}
}

// TestClassify: only failures to reach the server are unavailable; a
// caller going away and a statement's own error are not.
func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"nil", nil, false},
		{"no rows", errNoRowsForTest, false},
		{"canceled", context.Canceled, false},
		{"deadline", context.DeadlineExceeded, true},
		{"unique violation", pgError("23505"), false},
		{"admin shutdown", pgError("57P01"), true},
		{"starting up", pgError("57P03"), true},
		{"connection failure", pgError("08006"), true},
		{"already classified", errdefs.ErrUnavailable, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := classify(tc.err)
			if errors.Is(got, errdefs.ErrUnavailable) != tc.unavailable {
				t.Errorf("classify(%v) = %v, unavailable %v", tc.err, got, tc.unavailable)
			}
			if tc.err != nil && !errors.Is(got, tc.err) {
				t.Errorf("classify(%v) = %v lost the cause", tc.err, got)
			}
		})
	}
}

var errNoRowsForTest = pgx.ErrNoRows

func pgError(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
