package sqlstore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectEvent = `SELECT id, type, sandbox_id, template_id, build_id, execution_id, team_id, data, ts FROM sandbox_events`

// noLimit is a LIMIT both databases take as none (SQLite has no LIMIT ALL).
const noLimit = math.MaxInt64

// CreateEvent implements store.Store: the event and its deliveries in one
// transaction, so no event is left without the deliveries it owes.
func (s *Store) CreateEvent(ctx context.Context, e *store.Event, ds []*store.Delivery) error {
	if e.ID == "" {
		return fmt.Errorf("event without id: %w", errdefs.ErrInvalidArgument)
	}
	var data any // NULL for none; kept as the bytes were written
	if e.Data != nil {
		data = string(e.Data)
	}
	ts, err := s.d.Time(e.Timestamp)
	if err != nil {
		return fmt.Errorf("storing event %q: %w", e.ID, err)
	}
	return s.db.InTx(ctx, func(tx Conn) error {
		_, err := tx.Exec(ctx, `INSERT INTO sandbox_events (id, type, sandbox_id, template_id, build_id,
			execution_id, team_id, data, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.Type, e.SandboxID, e.TemplateID, e.BuildID, e.ExecutionID, e.TeamID, data, ts)
		if s.d.IsUniqueViolation(err) {
			return fmt.Errorf("event %q: %w", e.ID, errdefs.ErrAlreadyExists)
		}
		if err != nil {
			return fmt.Errorf("storing event %q: %w", e.ID, err)
		}
		for _, d := range ds {
			if err := s.insertDelivery(ctx, tx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func (s *Store) insertDelivery(ctx context.Context, tx Conn, d *store.Delivery) error {
	e := s.enc()
	args := []any{d.ID, d.WebhookID, d.EventID, d.EventType, d.Status, d.Attempts, e.nullTime(d.NextAttempt),
		d.LastStatus, d.LastError, e.time(d.CreatedAt), e.time(d.UpdatedAt), d.LastDuration.Milliseconds()}
	if e.err != nil {
		return fmt.Errorf("storing delivery %q: %w", d.ID, e.err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, status, attempts,
		next_attempt, last_status, last_error, created_at, updated_at, last_duration_ms) VALUES (`+marks(len(args))+`)`, args...)
	switch {
	case s.d.IsUniqueViolation(err):
		return fmt.Errorf("delivery %q: %w", d.ID, errdefs.ErrAlreadyExists)
	case s.d.IsForeignKeyViolation(err):
		return fmt.Errorf("delivery to webhook %q: %w", d.WebhookID, errdefs.ErrNotFound)
	case err != nil:
		return fmt.Errorf("storing delivery %q: %w", d.ID, err)
	}
	return nil
}

// GetEvent implements store.Store.
func (s *Store) GetEvent(ctx context.Context, id string) (*store.Event, error) {
	return getOne(s.db.QueryRow(ctx, selectEvent+` WHERE id = ?`, id), fmt.Sprintf("event %q", id), scanEvent)
}

// ListEvents implements store.Store. Each filter is its own condition, so
// the planner picks the team or sandbox index (both ordered by ts, id).
func (s *Store) ListEvents(ctx context.Context, q store.EventQuery) ([]*store.Event, error) {
	var (
		where []string
		args  []any
	)
	if q.TeamID != "" {
		where, args = append(where, "team_id = ?"), append(args, q.TeamID)
	}
	if q.SandboxID != "" {
		where, args = append(where, "sandbox_id = ?"), append(args, q.SandboxID)
	}
	if len(q.Types) > 0 {
		where, args = append(where, "type IN ("+marks(len(q.Types))+")"), append(args, anyArgs(q.Types)...)
	}
	query := selectEvent
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	if q.Asc {
		query += " ORDER BY ts NULLS FIRST, id"
	} else {
		query += " ORDER BY ts DESC NULLS LAST, id DESC"
	}
	rows, err := s.db.Query(ctx, query+" LIMIT ? OFFSET ?", append(args, limitArg(q.Limit), q.Offset)...)
	return collect(rows, err, "listing events", scanEvent)
}

// limitArg maps 0 (or less) to no limit.
func limitArg(limit int) int64 {
	if limit <= 0 {
		return noLimit
	}
	return int64(limit)
}

func scanEvent(row Row) (*store.Event, error) {
	var (
		e    store.Event
		data *string
		ts   timeCol
	)
	if err := row.Scan(&e.ID, &e.Type, &e.SandboxID, &e.TemplateID, &e.BuildID, &e.ExecutionID, &e.TeamID, &data, &ts); err != nil {
		return nil, err
	}
	if data != nil {
		e.Data = []byte(*data)
	}
	e.Timestamp = ts.t
	return &e, nil
}

// DeleteEventsBefore implements store.Store; the deliveries go with their
// events by ON DELETE CASCADE, in the same statement.
func (s *Store) DeleteEventsBefore(ctx context.Context, t time.Time) (int, error) {
	cut, err := s.d.Time(t)
	if err != nil {
		return 0, fmt.Errorf("pruning events: %w", err)
	}
	if t.IsZero() {
		return 0, nil // nothing is older than the zero time
	}
	n, err := s.db.Exec(ctx, `DELETE FROM sandbox_events WHERE ts < ? OR ts IS NULL`, cut)
	if err != nil {
		return 0, fmt.Errorf("pruning events: %w", err)
	}
	return int(n), nil
}
