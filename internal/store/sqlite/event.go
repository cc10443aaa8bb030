package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectEvent = `SELECT id, type, sandbox_id, template_id, build_id, execution_id, team_id, data, ts FROM sandbox_events`

// CreateEvent implements store.Store.
func (s *Store) CreateEvent(ctx context.Context, e *store.Event, ds []*store.Delivery) error {
	if e.ID == "" {
		return fmt.Errorf("event without id: %w", errdefs.ErrInvalidArgument)
	}
	var data any
	if e.Data != nil {
		data = string(e.Data)
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sandbox_events (id, type, sandbox_id, template_id, build_id, execution_id, team_id, data, ts)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			e.ID, e.Type, e.SandboxID, e.TemplateID, e.BuildID, e.ExecutionID, e.TeamID, data, formatTime(e.Timestamp))
		if isUniqueViolation(err) {
			return fmt.Errorf("event %q: %w", e.ID, errdefs.ErrAlreadyExists)
		}
		if err != nil {
			return fmt.Errorf("storing event: %w", err)
		}
		for _, d := range ds {
			if err := insertDelivery(ctx, tx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func insertDelivery(ctx context.Context, tx *sql.Tx, d *store.Delivery) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, status, attempts,
		next_attempt, last_status, last_error, last_duration_ms, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		d.ID, d.WebhookID, d.EventID, d.EventType, d.Status, d.Attempts, optTime(d.NextAttempt),
		d.LastStatus, d.LastError, d.LastDuration.Milliseconds(), formatTime(d.CreatedAt), formatTime(d.UpdatedAt))
	switch {
	case isUniqueViolation(err):
		return fmt.Errorf("delivery %q: %w", d.ID, errdefs.ErrAlreadyExists)
	case isForeignKeyViolation(err):
		return fmt.Errorf("delivery to webhook %q: %w", d.WebhookID, errdefs.ErrNotFound)
	case err != nil:
		return fmt.Errorf("storing delivery: %w", err)
	}
	return nil
}

// optTime stores the zero time as NULL.
func optTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return formatTime(t)
}

// GetEvent implements store.Store.
func (s *Store) GetEvent(ctx context.Context, id string) (*store.Event, error) {
	e, err := scanEvent(s.db.QueryRowContext(ctx, selectEvent+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("event %q: %w", id, errdefs.ErrNotFound)
	}
	return e, err
}

// ListEvents implements store.Store.
func (s *Store) ListEvents(ctx context.Context, q store.EventQuery) ([]*store.Event, error) {
	var where []string
	var args []any
	if q.TeamID != "" {
		where, args = append(where, "team_id = ?"), append(args, q.TeamID)
	}
	if q.SandboxID != "" {
		where, args = append(where, "sandbox_id = ?"), append(args, q.SandboxID)
	}
	if len(q.Types) > 0 {
		where = append(where, "type IN (?"+strings.Repeat(", ?", len(q.Types)-1)+")")
		for _, t := range q.Types {
			args = append(args, t)
		}
	}
	query := selectEvent
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	if q.Asc {
		query += " ORDER BY ts, id"
	} else {
		query += " ORDER BY ts DESC, id DESC"
	}
	limit := int64(q.Limit)
	if limit <= 0 {
		limit = -1 // SQLite's "no limit"; Postgres takes LIMIT ALL
	}
	query += " LIMIT ? OFFSET ?"
	args = append(args, limit, q.Offset)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("listing events: %w", err)
	}
	defer rows.Close()
	var out []*store.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

func scanEvent(sc interface{ Scan(...any) error }) (*store.Event, error) {
	var (
		e    store.Event
		data sql.NullString
		ts   string
	)
	if err := sc.Scan(&e.ID, &e.Type, &e.SandboxID, &e.TemplateID, &e.BuildID, &e.ExecutionID, &e.TeamID, &data, &ts); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		return nil, fmt.Errorf("reading event: %w", err)
	}
	if data.Valid {
		e.Data = []byte(data.String)
	}
	var err error
	if e.Timestamp, err = parseTime(ts); err != nil {
		return nil, err
	}
	return &e, nil
}

// DeleteEventsBefore implements store.Store.
func (s *Store) DeleteEventsBefore(ctx context.Context, t time.Time) (int, error) {
	var n int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cut := formatTime(t)
		if _, err := tx.ExecContext(ctx, `DELETE FROM webhook_deliveries
			WHERE event_id IN (SELECT id FROM sandbox_events WHERE ts < ?)`, cut); err != nil {
			return fmt.Errorf("pruning deliveries: %w", err)
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM sandbox_events WHERE ts < ?`, cut)
		if err != nil {
			return fmt.Errorf("pruning events: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return int(n), err
}
