package storage

import (
	"context"
	"database/sql"
	"time"
)

// Schedules returns the persisted schedule of every handler of a workflow.
func (q Q) Schedules(ctx context.Context, workflowID int64) ([]Schedule, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT workflow_id, handler, handler_type, next_run_at, wake_at, unrun
		FROM schedules WHERE workflow_id = ? ORDER BY handler`, workflowID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Schedule
	for rows.Next() {
		var s Schedule
		var next, wake sql.NullInt64
		if err := rows.Scan(&s.WorkflowID, &s.Handler, &s.HandlerType, &next, &wake, &s.Unrun); err != nil {
			return nil, err
		}
		s.NextRunAt, s.WakeAt = fromNullMS(next), fromNullMS(wake)
		out = append(out, s)
	}
	return out, rows.Err()
}

// EnsureSchedule creates a handler's schedule row if it has none.
func (tx *Tx) EnsureSchedule(ctx context.Context, workflowID int64, handler, handlerType string) error {
	_, err := tx.exec(ctx, `INSERT INTO schedules(workflow_id, handler, handler_type) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		workflowID, handler, handlerType)
	return err
}

// SetNextRun stores a producer's next_run_at.
func (tx *Tx) SetNextRun(ctx context.Context, workflowID int64, handler string, at *time.Time) error {
	_, err := tx.exec(ctx, `UPDATE schedules SET next_run_at = ? WHERE workflow_id = ? AND handler = ?`, msPtr(at), workflowID, handler)
	return err
}

// SetWake stores (or, with nil, clears) a consumer's wakeAt at the commit
// of one of its runs, which also ends its "not run since deploy" mark.
func (tx *Tx) SetWake(ctx context.Context, workflowID int64, handler string, at *time.Time) error {
	// a run that leaves the wake as it was writes nothing
	_, err := tx.exec(ctx, `UPDATE schedules SET wake_at = ?1, unrun = 0
		WHERE workflow_id = ?2 AND handler = ?3 AND (wake_at IS NOT ?1 OR unrun = 1)`, msPtr(at), workflowID, handler)
	return err
}

// ClearSchedule drops a handler's next_run_at and wakeAt: a deploy
// removed it, so nothing runs it at those times.
func (tx *Tx) ClearSchedule(ctx context.Context, workflowID int64, handler string) error {
	_, err := tx.exec(ctx, `UPDATE schedules SET next_run_at = NULL, wake_at = NULL WHERE workflow_id = ? AND handler = ?`,
		workflowID, handler)
	return err
}

// ClampWake moves a consumer's persisted wakeAt no later than latest
// (restart recovery: the policy or the clock may have changed since it was
// stored).
func (tx *Tx) ClampWake(ctx context.Context, workflowID int64, handler string, latest time.Time) error {
	_, err := tx.exec(ctx, `UPDATE schedules SET wake_at = ?1 WHERE workflow_id = ?2 AND handler = ?3 AND wake_at > ?1`,
		ms(latest), workflowID, handler)
	return err
}

// ClampNextRun moves a producer's persisted next_run_at no later than
// latest (a clock since set back reckoned it further).
func (tx *Tx) ClampNextRun(ctx context.Context, workflowID int64, handler string, latest time.Time) error {
	_, err := tx.exec(ctx, `UPDATE schedules SET next_run_at = ?1 WHERE workflow_id = ?2 AND handler = ?3 AND next_run_at > ?1`,
		ms(latest), workflowID, handler)
	return err
}

// ClampRetries moves a workflow's transient back-off (retry_at) and the
// next attempts of its calls waiting to be sent again or checked no later
// than latest (a clock since set back reckoned them further). Only the
// times move: the block and the calls' statuses stay as they are.
func (tx *Tx) ClampRetries(ctx context.Context, workflowID int64, latest time.Time) error {
	if _, err := tx.exec(ctx, `UPDATE workflows SET retry_at = ?1 WHERE id = ?2 AND block_kind = 'transient' AND retry_at > ?1`,
		ms(latest), workflowID); err != nil {
		return err
	}
	_, err := tx.exec(ctx, `UPDATE mutations SET next_attempt_at = ?1
		WHERE workflow_id = ?2 AND status IN ('in_flight', 'needs_reconcile') AND next_attempt_at > ?1`, ms(latest), workflowID)
	return err
}

// MarkUnrun marks a consumer as deployed and not run since: a restart
// before its first commit still runs it once (chapter 16 "Initial State").
func (tx *Tx) MarkUnrun(ctx context.Context, workflowID int64, handler string) error {
	_, err := tx.exec(ctx, `UPDATE schedules SET unrun = 1 WHERE workflow_id = ? AND handler = ? AND unrun = 0`, workflowID, handler)
	return err
}

// HandlerState returns a handler's state, nil if it has none.
func (q Q) HandlerState(ctx context.Context, workflowID int64, handler string) ([]byte, error) {
	var s sql.NullString
	err := q.q.QueryRowContext(ctx, `SELECT state FROM handler_state WHERE workflow_id = ? AND handler = ?`, workflowID, handler).Scan(&s)
	if err == sql.ErrNoRows {
		return nil, nil
	}
	if err != nil || !s.Valid {
		return nil, err
	}
	return []byte(s.String), nil
}

// SetHandlerState stores a handler's state.
func (tx *Tx) SetHandlerState(ctx context.Context, workflowID int64, handler string, state []byte, now time.Time) error {
	_, err := tx.exec(ctx, `INSERT INTO handler_state(workflow_id, handler, state, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT(workflow_id, handler) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at`,
		workflowID, handler, rawOrNil(state), ms(now))
	return err
}
