package storage

// The event bus's tables (migration 002, DESIGN.md §9): event_journal and
// deferred_events. Writes live on *Tx so that the engine can emit a
// notification in the same transaction as the change it announces; reads
// live on Q. Times come from the caller's clock, never from time.Now, so
// the bus's scheduling can be tested without sleeping.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Journal statuses: pending → processing → done | failed.
const (
	JournalPending    = "pending"
	JournalProcessing = "processing"
	JournalDone       = "done"
	JournalFailed     = "failed"
)

// Deferred statuses: scheduled → fired | cancelled.
const (
	DeferredScheduled = "scheduled"
	DeferredFired     = "fired"
	DeferredCancelled = "cancelled"
)

// ErrNotScheduled is returned when a deferred event asked to fire has already
// fired or been cancelled.
var ErrNotScheduled = errors.New("deferred event is not scheduled")

// BusMessage is what an emitter hands the bus: the part of an event that
// is the same whether it is journaled now or deferred.
type BusMessage struct {
	Topic  string
	Source string
	// Payload is JSON; empty means {}.
	Payload       json.RawMessage
	CorrelationID string
}

// JournalEvent is one row of event_journal.
type JournalEvent struct {
	ID            int64
	Topic         string
	Source        string
	Payload       json.RawMessage
	CorrelationID string
	Status        string
	CreatedAt     time.Time
	// ProcessedAt is zero until the event ends done or failed.
	ProcessedAt time.Time
	Error       string
}

// DeferredEvent is one row of deferred_events.
type DeferredEvent struct {
	ID            int64
	Topic         string
	Source        string
	Payload       json.RawMessage
	CorrelationID string
	FireAt        time.Time
	Status        string
	CreatedAt     time.Time
	// FiredAt is zero until the event fires; EventID is then the journal row
	// it became.
	FiredAt time.Time
	EventID int64
}

// JournalFilter selects journal events for observability. Empty fields
// match everything. Results are newest first.
type JournalFilter struct {
	Topic         string
	Status        string
	CorrelationID string
	// BeforeID: only events with a lower id (0: from the newest).
	BeforeID int64
	// Limit defaults to 100.
	Limit int
}

// DeferredFilter selects deferred events, newest first, like JournalFilter.
type DeferredFilter struct {
	Topic         string
	Status        string
	CorrelationID string
	BeforeID      int64
	Limit         int
}

const defaultListLimit = 100

const journalColumns = `id, topic, source, payload, correlation_id, status, created_at, processed_at, error`

const deferredColumns = `id, topic, source, payload, correlation_id, fire_at, status, created_at, fired_at, event_id`

// The two queries the dispatch loop runs on every wake; journal_test.go
// checks that SQLite answers them from the partial indexes.
const (
	claimPendingSQL = `UPDATE event_journal SET status = 'processing'
		WHERE id IN (SELECT id FROM event_journal WHERE status = 'pending' ORDER BY id LIMIT ?)
		RETURNING ` + journalColumns
	dueDeferredSQL = `SELECT ` + deferredColumns + ` FROM deferred_events
		WHERE status = 'scheduled' AND fire_at <= ? ORDER BY fire_at, id LIMIT ?`
	nextFireAtSQL = `SELECT fire_at FROM deferred_events WHERE status = 'scheduled' ORDER BY fire_at LIMIT 1`
)

func payloadText(p json.RawMessage) (string, error) {
	if len(p) == 0 {
		return "{}", nil
	}
	if !json.Valid(p) {
		return "", errors.New("payload is not valid JSON")
	}
	return string(p), nil
}

func millis(t time.Time) int64 { return t.UnixMilli() }

func fromMillis(ms sql.NullInt64) time.Time {
	if !ms.Valid {
		return time.Time{}
	}
	return time.UnixMilli(ms.Int64).UTC()
}

// InsertJournalEvent journals m as pending and returns its id.
func (tx *Tx) InsertJournalEvent(ctx context.Context, m BusMessage, now time.Time) (int64, error) {
	if m.Topic == "" {
		return 0, errors.New("storage: journal event: empty topic")
	}
	payload, err := payloadText(m.Payload)
	if err != nil {
		return 0, fmt.Errorf("storage: journal event %q: %w", m.Topic, err)
	}
	res, err := tx.exec(ctx, `INSERT INTO event_journal (topic, source, payload, correlation_id, status, created_at)
		VALUES (?, ?, ?, ?, 'pending', ?)`, m.Topic, m.Source, payload, m.CorrelationID, millis(now))
	if err != nil {
		return 0, fmt.Errorf("storage: journal event %q: %w", m.Topic, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("storage: journal event %q: %w", m.Topic, err)
	}
	return id, nil
}

// ScheduleDeferred stores m to be journaled at fireAt and returns its id.
func (tx *Tx) ScheduleDeferred(ctx context.Context, m BusMessage, fireAt, now time.Time) (int64, error) {
	if m.Topic == "" {
		return 0, errors.New("storage: schedule deferred event: empty topic")
	}
	payload, err := payloadText(m.Payload)
	if err != nil {
		return 0, fmt.Errorf("storage: schedule deferred event %q: %w", m.Topic, err)
	}
	res, err := tx.exec(ctx, `INSERT INTO deferred_events (topic, source, payload, correlation_id, fire_at, status, created_at)
		VALUES (?, ?, ?, ?, ?, 'scheduled', ?)`, m.Topic, m.Source, payload, m.CorrelationID, millis(fireAt), millis(now))
	if err != nil {
		return 0, fmt.Errorf("storage: schedule deferred event %q: %w", m.Topic, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("storage: schedule deferred event %q: %w", m.Topic, err)
	}
	return id, nil
}

// CancelDeferred cancels a deferred event that is still scheduled and says
// whether it was; one that already fired or was cancelled is left alone.
// An unknown id is ErrNotFound.
func (tx *Tx) CancelDeferred(ctx context.Context, id int64) (bool, error) {
	res, err := tx.exec(ctx, `UPDATE deferred_events SET status = 'cancelled' WHERE id = ? AND status = 'scheduled'`, id)
	if err != nil {
		return false, fmt.Errorf("storage: cancel deferred event %d: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("storage: cancel deferred event %d: %w", id, err)
	}
	if n > 0 {
		return true, nil
	}
	if _, err := tx.DeferredEvent(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}

// DueDeferred lists up to limit scheduled events with fire_at <= now,
// earliest first.
func (q Q) DueDeferred(ctx context.Context, now time.Time, limit int) ([]DeferredEvent, error) {
	rows, err := q.q.QueryContext(ctx, dueDeferredSQL, millis(now), limit)
	if err != nil {
		return nil, fmt.Errorf("storage: due deferred events: %w", err)
	}
	evs, err := scanDeferred(rows)
	if err != nil {
		return nil, fmt.Errorf("storage: due deferred events: %w", err)
	}
	return evs, nil
}

// FireDeferred marks a scheduled deferred event fired and journals it as
// pending, both in this transaction, and returns the journal id. An event
// that is no longer scheduled is ErrNotScheduled (a cancel got there first).
func (tx *Tx) FireDeferred(ctx context.Context, id int64, now time.Time) (int64, error) {
	d, err := tx.DeferredEvent(ctx, id)
	if err != nil {
		return 0, err
	}
	if d.Status != DeferredScheduled {
		return 0, fmt.Errorf("storage: fire deferred event %d (%s): %w", id, d.Status, ErrNotScheduled)
	}
	eventID, err := tx.InsertJournalEvent(ctx, BusMessage{
		Topic: d.Topic, Source: d.Source, Payload: d.Payload, CorrelationID: d.CorrelationID,
	}, now)
	if err != nil {
		return 0, err
	}
	if _, err := tx.exec(ctx, `UPDATE deferred_events SET status = 'fired', fired_at = ?, event_id = ? WHERE id = ?`,
		millis(now), eventID, id); err != nil {
		return 0, fmt.Errorf("storage: fire deferred event %d: %w", id, err)
	}
	return eventID, nil
}

// PromoteDueDeferred fires up to limit deferred events that are due at now
// (DueDeferred, then FireDeferred for each) and returns the journal ids.
func (tx *Tx) PromoteDueDeferred(ctx context.Context, now time.Time, limit int) ([]int64, error) {
	due, err := tx.DueDeferred(ctx, now, limit)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, len(due))
	for _, d := range due {
		id, err := tx.FireDeferred(ctx, d.ID, now)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// ClampDeferred brings back the scheduled deferred events made under a
// clock since set back (made after now): each fires its delay after now,
// as it was meant to after its making, not at a time the clock that was
// ahead reckoned. A reminder an hour on, scheduled while the clock ran a
// week ahead, would otherwise wait a week and an hour. The fire_at
// bound uses the index of the due events (a made-later event fires later
// still).
func (tx *Tx) ClampDeferred(ctx context.Context, now time.Time) (int64, error) {
	res, err := tx.exec(ctx, `UPDATE deferred_events SET fire_at = ?1 + (fire_at - created_at)
		WHERE status = 'scheduled' AND fire_at > ?1 AND created_at > ?1`, millis(now))
	if err != nil {
		return 0, fmt.Errorf("storage: clamp deferred events: %w", err)
	}
	return res.RowsAffected()
}

// NextFireAt is the earliest fire_at of the scheduled deferred events; ok
// is false when none is scheduled.
func (q Q) NextFireAt(ctx context.Context) (t time.Time, ok bool, err error) {
	var ms int64
	err = q.q.QueryRowContext(ctx, nextFireAtSQL).Scan(&ms)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, fmt.Errorf("storage: next deferred fire time: %w", err)
	}
	return time.UnixMilli(ms).UTC(), true, nil
}

// ClaimPending marks up to limit pending journal events processing, oldest
// first, and returns them (with status processing).
func (tx *Tx) ClaimPending(ctx context.Context, limit int) ([]JournalEvent, error) {
	rows, err := tx.q.QueryContext(ctx, claimPendingSQL, limit)
	if err != nil {
		return nil, fmt.Errorf("storage: claim pending events: %w", err)
	}
	evs, err := scanJournal(rows)
	if err != nil {
		return nil, fmt.Errorf("storage: claim pending events: %w", err)
	}
	// RETURNING gives no order guarantee; delivery is oldest first.
	sort.Slice(evs, func(i, j int) bool { return evs[i].ID < evs[j].ID })
	return evs, nil
}

// MarkJournalDone ends a processing event done.
func (tx *Tx) MarkJournalDone(ctx context.Context, id int64, now time.Time) error {
	return tx.finish(ctx, id, JournalDone, "", now)
}

// MarkJournalFailed ends a processing event failed with errText.
func (tx *Tx) MarkJournalFailed(ctx context.Context, id int64, errText string, now time.Time) error {
	return tx.finish(ctx, id, JournalFailed, errText, now)
}

func (tx *Tx) finish(ctx context.Context, id int64, status, errText string, now time.Time) error {
	res, err := tx.exec(ctx, `UPDATE event_journal SET status = ?, error = ?, processed_at = ?
		WHERE id = ? AND status = 'processing'`, status, errText, millis(now), id)
	if err != nil {
		return fmt.Errorf("storage: mark journal event %d %s: %w", id, status, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("storage: mark journal event %d %s: %w", id, status, err)
	} else if n == 0 {
		// Only the one dispatch loop that claimed an event may end it.
		return fmt.Errorf("storage: mark journal event %d %s: it is not processing", id, status)
	}
	return nil
}

// ReleaseJournalEvent puts one processing event back to pending, for a
// dispatcher that claimed it but is stopping before delivering it.
func (tx *Tx) ReleaseJournalEvent(ctx context.Context, id int64) error {
	if _, err := tx.exec(ctx, `UPDATE event_journal SET status = 'pending' WHERE id = ? AND status = 'processing'`, id); err != nil {
		return fmt.Errorf("storage: release journal event %d: %w", id, err)
	}
	return nil
}

// ResetProcessing puts every processing event back to pending and returns
// how many there were: at start-up, those are deliveries a crash
// interrupted, and at-least-once means delivering them again.
func (tx *Tx) ResetProcessing(ctx context.Context) (int, error) {
	res, err := tx.exec(ctx, `UPDATE event_journal SET status = 'pending' WHERE status = 'processing'`)
	if err != nil {
		return 0, fmt.Errorf("storage: reset processing events: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("storage: reset processing events: %w", err)
	}
	return int(n), nil
}

// JournalEvent reads one journal event; ErrNotFound if there is none.
func (q Q) JournalEvent(ctx context.Context, id int64) (JournalEvent, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+journalColumns+` FROM event_journal WHERE id = ?`, id)
	if err != nil {
		return JournalEvent{}, fmt.Errorf("storage: journal event %d: %w", id, err)
	}
	evs, err := scanJournal(rows)
	if err != nil {
		return JournalEvent{}, fmt.Errorf("storage: journal event %d: %w", id, err)
	}
	if len(evs) == 0 {
		return JournalEvent{}, fmt.Errorf("storage: journal event %d: %w", id, ErrNotFound)
	}
	return evs[0], nil
}

// DeferredEvent reads one deferred event; ErrNotFound if there is none.
func (q Q) DeferredEvent(ctx context.Context, id int64) (DeferredEvent, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT `+deferredColumns+` FROM deferred_events WHERE id = ?`, id)
	if err != nil {
		return DeferredEvent{}, fmt.Errorf("storage: deferred event %d: %w", id, err)
	}
	evs, err := scanDeferred(rows)
	if err != nil {
		return DeferredEvent{}, fmt.Errorf("storage: deferred event %d: %w", id, err)
	}
	if len(evs) == 0 {
		return DeferredEvent{}, fmt.Errorf("storage: deferred event %d: %w", id, ErrNotFound)
	}
	return evs[0], nil
}

// ListJournal lists journal events matching f, newest first.
func (q Q) ListJournal(ctx context.Context, f JournalFilter) ([]JournalEvent, error) {
	where, args := filterSQL(f.Topic, f.Status, f.CorrelationID, f.BeforeID)
	rows, err := q.q.QueryContext(ctx, `SELECT `+journalColumns+` FROM event_journal`+where+
		` ORDER BY id DESC LIMIT ?`, append(args, listLimit(f.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("storage: list journal events: %w", err)
	}
	evs, err := scanJournal(rows)
	if err != nil {
		return nil, fmt.Errorf("storage: list journal events: %w", err)
	}
	return evs, nil
}

// ListDeferred lists deferred events matching f, newest first.
func (q Q) ListDeferred(ctx context.Context, f DeferredFilter) ([]DeferredEvent, error) {
	where, args := filterSQL(f.Topic, f.Status, f.CorrelationID, f.BeforeID)
	rows, err := q.q.QueryContext(ctx, `SELECT `+deferredColumns+` FROM deferred_events`+where+
		` ORDER BY id DESC LIMIT ?`, append(args, listLimit(f.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("storage: list deferred events: %w", err)
	}
	evs, err := scanDeferred(rows)
	if err != nil {
		return nil, fmt.Errorf("storage: list deferred events: %w", err)
	}
	return evs, nil
}

func listLimit(n int) int {
	if n <= 0 {
		return defaultListLimit
	}
	return n
}

// filterSQL builds the WHERE clause both tables share; the column names
// are fixed here, only values are bound.
func filterSQL(topic, status, correlationID string, beforeID int64) (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, arg any) {
		conds = append(conds, cond)
		args = append(args, arg)
	}
	if topic != "" {
		add("topic = ?", topic)
	}
	if status != "" {
		add("status = ?", status)
	}
	if correlationID != "" {
		add("correlation_id = ?", correlationID)
	}
	if beforeID > 0 {
		add("id < ?", beforeID)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

func scanJournal(rows *sql.Rows) ([]JournalEvent, error) {
	defer rows.Close()
	var evs []JournalEvent
	for rows.Next() {
		var e JournalEvent
		var payload string
		var created int64
		var processed sql.NullInt64
		if err := rows.Scan(&e.ID, &e.Topic, &e.Source, &payload, &e.CorrelationID, &e.Status,
			&created, &processed, &e.Error); err != nil {
			return nil, err
		}
		e.Payload = json.RawMessage(payload)
		e.CreatedAt = time.UnixMilli(created).UTC()
		e.ProcessedAt = fromMillis(processed)
		evs = append(evs, e)
	}
	return evs, rows.Err()
}

func scanDeferred(rows *sql.Rows) ([]DeferredEvent, error) {
	defer rows.Close()
	var evs []DeferredEvent
	for rows.Next() {
		var d DeferredEvent
		var payload string
		var fireAt, created int64
		var fired, eventID sql.NullInt64
		if err := rows.Scan(&d.ID, &d.Topic, &d.Source, &payload, &d.CorrelationID, &fireAt, &d.Status,
			&created, &fired, &eventID); err != nil {
			return nil, err
		}
		d.Payload = json.RawMessage(payload)
		d.FireAt = time.UnixMilli(fireAt).UTC()
		d.CreatedAt = time.UnixMilli(created).UTC()
		d.FiredAt = fromMillis(fired)
		d.EventID = eventID.Int64
		evs = append(evs, d)
	}
	return evs, rows.Err()
}
