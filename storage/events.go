package storage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ErrNotReservable is returned when a run's reservation names an event that
// does not exist in the workflow, or is not pending and unreserved.
var ErrNotReservable = errors.New("event cannot be reserved")

const eventCols = `id, workflow_id, topic, message_id, payload, status, reserved_by, created_by, attempts, created_at, updated_at`

func scanEvent(row interface{ Scan(...any) error }) (*Event, error) {
	var e Event
	var payload string
	var reservedBy, createdBy sql.NullInt64
	var created, updated int64
	if err := row.Scan(&e.ID, &e.WorkflowID, &e.Topic, &e.MessageID, &payload, &e.Status, &reservedBy, &createdBy,
		&e.Attempts, &created, &updated); err != nil {
		return nil, notFound(err)
	}
	e.Payload = json.RawMessage(payload)
	e.ReservedBy, e.CreatedBy = reservedBy.Int64, createdBy.Int64
	e.CreatedAt, e.UpdatedAt = fromMS(created), fromMS(updated)
	return &e, nil
}

func (q Q) events(ctx context.Context, query string, args ...any) ([]*Event, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// PublishEvent creates an event, or, when (workflow, topic, message_id)
// exists, replaces its payload and keeps its status (chapter 06a
// last-write-wins). Causes are added to the event's existing ones.
//
// The same payload published again leaves the row's bytes as they are, so
// SQLite writes no page for it: a producer that rescans a folder of 1,000
// known files rewrote 1,000 rows (their updated_at) on every scan, 32 WAL
// pages, now 12.
func (tx *Tx) PublishEvent(ctx context.Context, workflowID int64, topic, messageID string, payload json.RawMessage,
	runID int64, causes []int64, now time.Time) (int64, error) {
	id, _, err := tx.Publish(ctx, workflowID, topic, messageID, payload, runID, causes, now)
	return id, err
}

// Publish is PublishEvent saying whether the publication is news to the
// topic's consumers: a new event, or a pending one whose payload changed.
// The same event published again (a producer polling what it already
// published) is not, and wakes no consumer.
func (tx *Tx) Publish(ctx context.Context, workflowID int64, topic, messageID string, payload json.RawMessage,
	runID int64, causes []int64, now time.Time) (id int64, news bool, err error) {
	var status string
	var updated int64
	err = tx.q.QueryRowContext(ctx, `INSERT INTO events(workflow_id, topic, message_id, payload, created_by, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT(workflow_id, topic, message_id) DO UPDATE SET payload = excluded.payload,
			updated_at = CASE WHEN events.payload IS excluded.payload THEN events.updated_at ELSE excluded.updated_at END
		RETURNING id, status, updated_at`, workflowID, topic, messageID, string(payload), nullID(runID), ms(now), ms(now)).Scan(&id, &status, &updated)
	if err != nil {
		return 0, false, fmt.Errorf("publish to %s: %w", topic, err)
	}
	news = status == string(EventPending) && updated == ms(now)
	for _, in := range causes {
		if _, err := tx.exec(ctx, insertCause, id, in); err != nil {
			return 0, false, fmt.Errorf("publish to %s: cause: %w", topic, err)
		}
	}
	return id, news, nil
}

// Peek returns a topic's pending, unreserved events, oldest first. The
// partial index events_open makes this cost the page, not the history.
// (LIMIT +? keeps the prepared statement reusable: stmts.go.)
func (q Q) Peek(ctx context.Context, workflowID int64, topic string, limit int) ([]*Event, error) {
	return q.events(ctx, `SELECT `+eventCols+` FROM events INDEXED BY events_open
		WHERE workflow_id = ? AND topic = ? AND status = 'pending' AND reserved_by IS NULL ORDER BY id LIMIT +?`,
		workflowID, topic, limit)
}

// PeekSkipping is Peek less the events skip says to leave (runs under way
// chose them): the first limit others, out of at most limit+skipping rows.
// It stops reading once it has limit, so the rows past them that Peek's
// bound would take in are not read.
func (q Q) PeekSkipping(ctx context.Context, workflowID int64, topic string, limit, skipping int, skip func(id int64) bool) ([]*Event, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+eventCols+` FROM events INDEXED BY events_open
		WHERE workflow_id = ? AND topic = ? AND status = 'pending' AND reserved_by IS NULL ORDER BY id LIMIT +?`,
		workflowID, topic, limit+skipping)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Event
	for len(out) < limit && rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		if !skip(e.ID) {
			out = append(out, e)
		}
	}
	return out, rows.Err()
}

// EventsByMessageIDs returns the events of a topic with these message ids, any status.
func (q Q) EventsByMessageIDs(ctx context.Context, workflowID int64, topic string, ids []string) ([]*Event, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := []any{workflowID, topic}
	for _, id := range ids {
		args = append(args, id)
	}
	return q.events(ctx, `SELECT `+eventCols+` FROM events WHERE workflow_id = ? AND topic = ? AND message_id IN (`+
		placeholders(len(ids))+`) ORDER BY id`, args...)
}

// EventByID returns one event with its causes.
func (q Q) EventByID(ctx context.Context, id int64) (*Event, error) {
	e, err := scanEvent(q.q.QueryRowContext(ctx, `SELECT `+eventCols+` FROM events WHERE id = ?`, id))
	if err != nil {
		return nil, err
	}
	if err := q.fillCauses(ctx, []*Event{e}); err != nil {
		return nil, err
	}
	return e, nil
}

// Events pages a workflow's events newest first (ids below before; 0: from
// the newest), optionally by topic and status, each with its causes.
func (q Q) Events(ctx context.Context, workflowID int64, topic, status string, before int64, limit int) ([]*Event, error) {
	if before <= 0 {
		before = 1<<62 - 1
	}
	query := `SELECT ` + eventCols + ` FROM events WHERE workflow_id = ? AND id < ?`
	args := []any{workflowID, before}
	if topic != "" {
		query += ` AND topic = ?`
		args = append(args, topic)
	}
	if status != "" {
		query += ` AND status = ?`
		args = append(args, status)
	}
	query += ` ORDER BY id DESC LIMIT +?`
	args = append(args, limit)
	evs, err := q.events(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return evs, q.fillCauses(ctx, evs)
}

func (q Q) fillCauses(ctx context.Context, evs []*Event) error {
	if len(evs) == 0 {
		return nil
	}
	byID := map[int64]*Event{}
	args := make([]any, 0, len(evs))
	for _, e := range evs {
		byID[e.ID] = e
		args = append(args, e.ID)
	}
	rows, err := q.q.QueryContext(ctx, `SELECT event_id, input_id FROM event_causes WHERE event_id IN (`+placeholders(len(evs))+`) ORDER BY input_id`, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var ev, in int64
		if err := rows.Scan(&ev, &in); err != nil {
			return err
		}
		byID[ev].CausedBy = append(byID[ev].CausedBy, in)
	}
	return rows.Err()
}

// Reserve pins events to a run: each must belong to the workflow, be pending
// and unreserved. The reservation history gains one row per event.
func (tx *Tx) Reserve(ctx context.Context, workflowID, runID int64, eventIDs []int64, now time.Time) error {
	for _, id := range eventIDs {
		res, err := tx.exec(ctx, `UPDATE events SET reserved_by = ?, updated_at = ?
			WHERE id = ? AND workflow_id = ? AND status = 'pending' AND reserved_by IS NULL`, runID, ms(now), id, workflowID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n != 1 {
			return fmt.Errorf("event %d: %w", id, ErrNotReservable)
		}
		if _, err := tx.exec(ctx, `INSERT INTO reservations(run_id, event_id, created_at) VALUES (?, ?, ?)`, runID, id, ms(now)); err != nil {
			return err
		}
	}
	return nil
}

// ReservedBy lists the events a run holds, pending or not.
func (q Q) ReservedBy(ctx context.Context, runID int64) ([]*Event, error) {
	return q.events(ctx, `SELECT `+eventCols+` FROM events WHERE reserved_by = ? ORDER BY id`, runID)
}

// TakeOver moves the pending events a run holds to another run (a retry or
// recovery run), appending to the reservation history.
func (tx *Tx) TakeOver(ctx context.Context, fromRun, toRun int64, now time.Time) error {
	if _, err := tx.exec(ctx, `INSERT INTO reservations(run_id, event_id, created_at)
		SELECT ?, id, ? FROM events WHERE reserved_by = ? AND status = 'pending'`, toRun, ms(now), fromRun); err != nil {
		return err
	}
	_, err := tx.exec(ctx, `UPDATE events SET reserved_by = ?, updated_at = ? WHERE reserved_by = ? AND status = 'pending'`,
		toRun, ms(now), fromRun)
	return err
}

// Release returns a run's pending events to the queue, counting the attempt.
// Skipped events stay skipped.
func (tx *Tx) Release(ctx context.Context, runID int64, now time.Time) (int, error) {
	res, err := tx.exec(ctx, `UPDATE events SET reserved_by = NULL, attempts = attempts + 1, updated_at = ?
		WHERE reserved_by = ? AND status = 'pending'`, ms(now), runID)
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// Consume marks a run's pending events consumed (or skipped).
func (tx *Tx) Consume(ctx context.Context, runID int64, status EventStatus, now time.Time) error {
	_, err := tx.exec(ctx, `UPDATE events SET status = ?, updated_at = ? WHERE reserved_by = ? AND status = 'pending'`,
		status, ms(now), runID)
	return err
}

const causesOfRun = `SELECT c.input_id FROM reservations r JOIN event_causes c ON c.event_id = r.event_id WHERE r.run_id = ?`

// CausesOfRun is the union of the causes of the events a run reserved, in
// order. A run reserves a few events, so they are sorted and made distinct
// here: in SQL each would build a temporary table, once per consumer run.
func (q Q) CausesOfRun(ctx context.Context, runID int64) ([]int64, error) {
	rows, err := q.q.QueryContext(ctx, causesOfRun, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// OldestPending returns the id of the oldest pending, unreserved event in
// any of the topics, 0 when there is none.
func (q Q) OldestPending(ctx context.Context, workflowID int64, topics []string) (int64, error) {
	var oldest int64
	for _, t := range topics {
		var id int64
		err := q.q.QueryRowContext(ctx, `SELECT id FROM events INDEXED BY events_open
			WHERE workflow_id = ? AND topic = ? AND status = 'pending' AND reserved_by IS NULL ORDER BY id LIMIT 1`, workflowID, t).Scan(&id)
		if err == sql.ErrNoRows {
			continue
		}
		if err != nil {
			return 0, err
		}
		if oldest == 0 || id < oldest {
			oldest = id
		}
	}
	return oldest, nil
}

// SkipEvent marks one pending, unreserved event skipped.
func (tx *Tx) SkipEvent(ctx context.Context, id int64, now time.Time) error {
	res, err := tx.exec(ctx, `UPDATE events SET status = 'skipped', updated_at = ? WHERE id = ? AND status = 'pending' AND reserved_by IS NULL`, ms(now), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return fmt.Errorf("event %d: %w", id, ErrNotReservable)
	}
	return nil
}

// RunsHoldingInput returns the runs that hold a pending event caused by an input.
func (q Q) RunsHoldingInput(ctx context.Context, inputID int64) ([]int64, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT DISTINCT e.reserved_by FROM events e JOIN event_causes c ON c.event_id = e.id
		WHERE c.input_id = ? AND e.status = 'pending' AND e.reserved_by IS NOT NULL ORDER BY 1`, inputID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var runs []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		runs = append(runs, id)
	}
	return runs, rows.Err()
}

// SkipEventsOfInput marks every pending event caused by an input skipped,
// except those held by the runs in keep (work past its mutation completes).
func (tx *Tx) SkipEventsOfInput(ctx context.Context, inputID int64, keep []int64, now time.Time) error {
	query := `UPDATE events SET status = 'skipped', updated_at = ?
		WHERE status = 'pending' AND id IN (SELECT event_id FROM event_causes WHERE input_id = ?)`
	args := []any{ms(now), inputID}
	if len(keep) > 0 {
		query += ` AND (reserved_by IS NULL OR reserved_by NOT IN (` + placeholders(len(keep)) + `))`
		for _, k := range keep {
			args = append(args, k)
		}
	}
	_, err := tx.exec(ctx, query, args...)
	return err
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
