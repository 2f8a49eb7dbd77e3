package storage

import "context"

// InputCounts are a workflow's inputs by status (DESIGN.md §7.5), with the
// precedence of the engine's inputStatus: skipped, then needs attention,
// then pending, then done.
type InputCounts struct {
	Total, Skipped, NeedsAttention, Pending, Done int
}

// InputCounts counts a workflow's inputs by status without reading its
// history: the totals are kept by triggers (migration 4), and the inputs
// that are not done are found from what is open — open runs, open
// mutations, pending events, inputs no event names — each through a
// partial index, so the cost is the open work, not the history.
func (q Q) InputCounts(ctx context.Context, workflowID int64) (InputCounts, error) {
	var c InputCounts
	err := q.q.QueryRowContext(ctx, `SELECT COALESCE(MAX(total), 0), COALESCE(MAX(skipped), 0) FROM input_counts WHERE workflow_id = ?`,
		workflowID).Scan(&c.Total, &c.Skipped)
	if err != nil {
		return c, err
	}
	err = q.q.QueryRowContext(ctx, `WITH
		waiting_runs(id) AS (
			SELECT id FROM runs INDEXED BY runs_open WHERE workflow_id = ?1 AND closed_at IS NULL
				AND status IN ('paused:approval', 'paused:reconciliation', 'failed:logic', 'failed:internal')
			UNION
			SELECT ru.id FROM mutations m INDEXED BY mutations_open JOIN runs ru INDEXED BY runs_by_mutation ON ru.mutation_id = m.id
			WHERE (m.status = 'awaiting_approval' OR m.status = 'in_flight' OR m.status = 'needs_reconcile' OR m.status = 'indeterminate')
				AND m.status <> 'in_flight' AND m.workflow_id = ?1),
		attention(input_id) AS (
			SELECT DISTINCT c.input_id FROM waiting_runs w JOIN reservations r ON r.run_id = w.id
				JOIN event_causes c ON c.event_id = r.event_id
				JOIN inputs i ON i.id = c.input_id WHERE i.skipped_at IS NULL),
		open(input_id) AS (
			SELECT c.input_id FROM events e INDEXED BY events_open JOIN event_causes c ON c.event_id = e.id
				WHERE e.workflow_id = ?1 AND e.status = 'pending'
			UNION
			SELECT input_id FROM uncaused_inputs WHERE workflow_id = ?1)
		SELECT (SELECT COUNT(*) FROM attention),
			(SELECT COUNT(*) FROM open o JOIN inputs i ON i.id = o.input_id
				WHERE i.skipped_at IS NULL AND o.input_id NOT IN (SELECT input_id FROM attention))`,
		workflowID).Scan(&c.NeedsAttention, &c.Pending)
	if err != nil {
		return c, err
	}
	c.Done = c.Total - c.Skipped - c.NeedsAttention - c.Pending
	return c, nil
}

// MutationCounts counts a workflow's mutations per connector and status:
// the settled ones from the counters triggers keep (migrations 5 and 13),
// the open ones, a few, from their index.
func (q Q) MutationCounts(ctx context.Context, workflowID int64) (map[string]map[string]int, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT connector, status, n FROM mutation_counts WHERE workflow_id = ?1 AND n > 0
		UNION ALL
		SELECT connector, status, COUNT(*) FROM mutations INDEXED BY mutations_open
		WHERE (status = 'awaiting_approval' OR status = 'in_flight' OR status = 'needs_reconcile' OR status = 'indeterminate') AND workflow_id = ?1
		GROUP BY connector, status`, workflowID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]int{}
	for rows.Next() {
		var c, s string
		var n int
		if err := rows.Scan(&c, &s, &n); err != nil {
			return nil, err
		}
		if out[c] == nil {
			out[c] = map[string]int{}
		}
		out[c][s] = n
	}
	return out, rows.Err()
}

// RetriedFailure is a failed mutation (nothing was done) that a later run
// took up again for the same event with the same capability, and the
// parameters of that later attempt.
type RetriedFailure struct {
	Failed      *Mutation
	LaterParams []byte
}

// RetriedFailures lists w's failed mutations that a later attempt at the
// same capability followed for an event they shared: one outcome, not a
// failure beside a success. Read only when the counters hold a failure,
// so a workflow that never failed reads nothing here.
func (q Q) RetriedFailures(ctx context.Context, workflowID int64) ([]RetriedFailure, error) {
	rows, err := q.q.QueryContext(ctx, `SELECT DISTINCT m2.params, `+prefixed("m", mutationCols)+`
		FROM mutations m INDEXED BY mutations_by_workflow
		JOIN runs ru INDEXED BY runs_by_mutation ON ru.mutation_id = m.id
		JOIN reservations r ON r.run_id = ru.id
		JOIN reservations r2 INDEXED BY reservations_by_event ON r2.event_id = r.event_id AND r2.run_id <> r.run_id
		JOIN runs ru2 ON ru2.id = r2.run_id
		JOIN mutations m2 ON m2.id = ru2.mutation_id
		WHERE m.workflow_id = ?1 AND m.status = 'failed' AND m2.id > m.id AND m2.connector = m.connector AND m2.method = m.method
		ORDER BY m.id, m2.id`, workflowID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []RetriedFailure
	for rows.Next() {
		var later string
		m, err := scanMutationWith(rows, &later)
		if err != nil {
			return nil, err
		}
		out = append(out, RetriedFailure{Failed: m, LaterParams: []byte(later)})
	}
	return out, rows.Err()
}
