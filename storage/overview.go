package storage

import (
	"context"
	"time"
)

// PendingInputCount counts a workflow's inputs with a pending event (served
// by the open-events index, so it costs what is open, not the history).
func (q Q) PendingInputCount(ctx context.Context, workflowID int64) (int, error) {
	var n int
	err := q.q.QueryRowContext(ctx, `SELECT COUNT(DISTINCT c.input_id) FROM events e INDEXED BY events_open
		JOIN event_causes c ON c.event_id = e.id WHERE e.workflow_id = ? AND e.status = 'pending'`, workflowID).Scan(&n)
	return n, err
}

// StaleInputs lists inputs (of any workflow) with an unreserved event still
// pending since before a time, oldest first, skipped inputs excluded.
func (q Q) StaleInputs(ctx context.Context, before time.Time, limit int) ([]*Input, error) {
	return q.inputs(ctx, `SELECT `+prefixed("i", inputCols)+` FROM inputs i WHERE i.skipped_at IS NULL AND i.id IN (
		SELECT c.input_id FROM events e JOIN event_causes c ON c.event_id = e.id
		WHERE e.status = 'pending' AND e.reserved_by IS NULL AND e.created_at < ?) ORDER BY i.id LIMIT +?`, ms(before), limit)
}

// InputTitles returns the titles of the inputs that caused the events a run
// reserved ("because of").
func (q Q) InputTitles(ctx context.Context, runID int64) ([]string, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT DISTINCT i.title FROM reservations r JOIN event_causes c ON c.event_id = r.event_id
		JOIN inputs i ON i.id = c.input_id WHERE r.run_id = ? ORDER BY i.id`, runID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
