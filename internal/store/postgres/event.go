package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/warren-sandbox/warren/internal/errdefs"
	"github.com/warren-sandbox/warren/internal/store"
)

const selectEvent = `SELECT id, type, sandbox_id, template_id, build_id, execution_id, team_id, data, ts FROM sandbox_events`

// CreateEvent implements store.Store: the event and its deliveries in one
// transaction, so no event is left without the deliveries it owes.
func (s *Store) CreateEvent(ctx context.Context, e *store.Event, ds []*store.Delivery) error {
	if e.ID == "" {
		return fmt.Errorf("event without id: %w", errdefs.ErrInvalidArgument)
	}
	var data any // NULL for none; json keeps the bytes as written
	if e.Data != nil {
		data = string(e.Data)
	}
	var enc encoder
	ts := enc.time(e.Timestamp)
	if enc.err != nil {
		return fmt.Errorf("storing event %q: %w", e.ID, enc.err)
	}
	return s.inTx(ctx, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO sandbox_events (id, type, sandbox_id, template_id, build_id,
			execution_id, team_id, data, ts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			e.ID, e.Type, e.SandboxID, e.TemplateID, e.BuildID, e.ExecutionID, e.TeamID, data, ts)
		if isUniqueViolation(err) {
			return fmt.Errorf("event %q: %w", e.ID, errdefs.ErrAlreadyExists)
		}
		if err != nil {
			return fmt.Errorf("storing event %q: %w", e.ID, err)
		}
		for _, d := range ds {
			if err := insertDelivery(ctx, tx, d); err != nil {
				return err
			}
		}
		return nil
	})
}

func insertDelivery(ctx context.Context, tx pgx.Tx, d *store.Delivery) error {
	var e encoder
	args := []any{d.ID, d.WebhookID, d.EventID, d.EventType, d.Status, d.Attempts, e.time(d.NextAttempt),
		d.LastStatus, d.LastError, e.time(d.CreatedAt), e.time(d.UpdatedAt), d.LastDuration.Milliseconds()}
	if e.err != nil {
		return fmt.Errorf("storing delivery %q: %w", d.ID, e.err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO webhook_deliveries (id, webhook_id, event_id, event_type, status, attempts,
		next_attempt, last_status, last_error, created_at, updated_at, last_duration_ms) VALUES (`+placeholders(1, len(args))+`)`, args...)
	switch {
	case isUniqueViolation(err):
		return fmt.Errorf("delivery %q: %w", d.ID, errdefs.ErrAlreadyExists)
	case isForeignKeyViolation(err):
		return fmt.Errorf("delivery to webhook %q: %w", d.WebhookID, errdefs.ErrNotFound)
	case err != nil:
		return fmt.Errorf("storing delivery %q: %w", d.ID, err)
	}
	return nil
}

// GetEvent implements store.Store.
func (s *Store) GetEvent(ctx context.Context, id string) (*store.Event, error) {
	return getOne(s.pool.QueryRow(ctx, selectEvent+` WHERE id = $1`, id), fmt.Sprintf("event %q", id), scanEvent)
}

// ListEvents implements store.Store. Each filter is its own condition, so
// the planner picks the team or sandbox index (both ordered by ts, id).
func (s *Store) ListEvents(ctx context.Context, q store.EventQuery) ([]*store.Event, error) {
	var (
		where []string
		args  []any
	)
	arg := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if q.TeamID != "" {
		arg("team_id = $%d", q.TeamID)
	}
	if q.SandboxID != "" {
		arg("sandbox_id = $%d", q.SandboxID)
	}
	if len(q.Types) > 0 {
		arg("type = ANY($%d)", q.Types)
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
	var limit any // NULL is LIMIT ALL
	if q.Limit > 0 {
		limit = q.Limit
	}
	args = append(args, limit, q.Offset)
	query += fmt.Sprintf(" LIMIT $%d OFFSET $%d", len(args)-1, len(args))
	rows, err := s.pool.Query(ctx, query, args...)
	return collect(rows, err, "listing events", scanEvent)
}

func scanEvent(row pgx.Row) (*store.Event, error) {
	var (
		e    store.Event
		data *string
		ts   *int64
	)
	if err := row.Scan(&e.ID, &e.Type, &e.SandboxID, &e.TemplateID, &e.BuildID, &e.ExecutionID, &e.TeamID, &data, &ts); err != nil {
		return nil, err
	}
	if data != nil {
		e.Data = []byte(*data)
	}
	e.Timestamp = fromNanos(ts)
	return &e, nil
}

// DeleteEventsBefore implements store.Store; the deliveries go with their
// events by ON DELETE CASCADE, in the same statement.
func (s *Store) DeleteEventsBefore(ctx context.Context, t time.Time) (int, error) {
	var e encoder
	cut := e.time(t)
	if e.err != nil {
		return 0, fmt.Errorf("pruning events: %w", e.err)
	}
	if cut == nil {
		return 0, nil // nothing is older than the zero time
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM sandbox_events WHERE ts < $1 OR ts IS NULL`, cut)
	if err != nil {
		return 0, fmt.Errorf("pruning events: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
