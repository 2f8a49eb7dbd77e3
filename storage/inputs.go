package storage

import (
	"context"
	"database/sql"
	"slices"
	"time"
)

const inputCols = `id, workflow_id, source, type, external_id, title, created_by, created_at, skipped_at`

func scanInput(row interface{ Scan(...any) error }) (*Input, error) {
	var in Input
	var createdBy, skipped sql.NullInt64
	var created int64
	if err := row.Scan(&in.ID, &in.WorkflowID, &in.Source, &in.Type, &in.ExternalID, &in.Title, &createdBy, &created, &skipped); err != nil {
		return nil, notFound(err)
	}
	in.CreatedBy = createdBy.Int64
	in.CreatedAt, in.SkippedAt = fromMS(created), fromNullMS(skipped)
	return &in, nil
}

// InputIDByKey finds the id of an input by its natural key, or
// ErrNotFound: a producer's registerInput asks it of every item, and the
// key's unique index holds the id, so no row of inputs is read.
func (q Q) InputIDByKey(ctx context.Context, workflowID int64, source, typ, externalID string) (int64, error) {
	var id int64
	err := q.q.QueryRowContext(ctx, inputIDByKey, workflowID, source, typ, externalID).Scan(&id)
	return id, notFound(err)
}

const inputIDByKey = `SELECT id FROM inputs WHERE workflow_id = ? AND source = ? AND type = ? AND external_id = ?`

// InputByID returns one input, or ErrNotFound.
func (q Q) InputByID(ctx context.Context, id int64) (*Input, error) {
	return scanInput(q.q.QueryRowContext(ctx, `SELECT `+inputCols+` FROM inputs WHERE id = ?`, id))
}

// InsertInput stores an input under an id the engine allocated. A repeated
// natural key keeps the first row (registration is idempotent).
func (tx *Tx) InsertInput(ctx context.Context, in *Input) error {
	_, err := tx.exec(ctx, `INSERT INTO inputs(id, workflow_id, source, type, external_id, title, created_by, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(workflow_id, source, type, external_id) DO UPDATE SET title = excluded.title`,
		in.ID, in.WorkflowID, in.Source, in.Type, in.ExternalID, in.Title, nullID(in.CreatedBy), ms(in.CreatedAt))
	return err
}

// MarkInputSkipped records that the user skipped an input.
func (tx *Tx) MarkInputSkipped(ctx context.Context, id int64, now time.Time) error {
	_, err := tx.exec(ctx, `UPDATE inputs SET skipped_at = ? WHERE id = ?`, ms(now), id)
	return err
}

// Inputs pages a workflow's inputs newest first (ids below before; 0: from
// the newest), optionally filtered by a substring of the title.
func (q Q) Inputs(ctx context.Context, workflowID int64, before int64, limit int, filter string) ([]*Input, error) {
	query, args := inputsPage.before(workflowID, before, limit, filter)
	return q.inputs(ctx, query, args...)
}

// InputsAfter pages a workflow's inputs from the oldest end: the limit
// inputs with the lowest ids above after (0: the oldest), below before (0:
// no bound), optionally filtered by a substring of the title. The page is
// returned newest first, like Inputs, so a caller holds one order whichever
// end it read from; inputs_by_workflow serves the ascending walk as it
// serves the descending one.
func (q Q) InputsAfter(ctx context.Context, workflowID int64, after, before int64, limit int, filter string) ([]*Input, error) {
	query, args := inputsPage.after(workflowID, after, before, limit, filter)
	ins, err := q.inputs(ctx, query, args...)
	slices.Reverse(ins)
	return ins, err
}

func (q Q) inputs(ctx context.Context, query string, args ...any) ([]*Input, error) {
	rows, err := q.q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Input
	for rows.Next() {
		in, err := scanInput(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, in)
	}
	return out, rows.Err()
}

// InputFacts is what an input's status is computed from (DESIGN.md §7.5).
type InputFacts struct {
	Events  int // events it caused
	Open    int // of those, pending (reserved or not)
	Waiting int // open runs that reserved its events and wait on the user
	Outputs []*Mutation
}

// InputFacts gathers, for a page of inputs, the counts and outputs their
// status is computed from. Outputs come from the reservation history: every
// mutation of every run that ever reserved an event the input caused.
func (q Q) InputFacts(ctx context.Context, inputIDs []int64) (map[int64]*InputFacts, error) {
	facts := map[int64]*InputFacts{}
	if len(inputIDs) == 0 {
		return facts, nil
	}
	args := make([]any, len(inputIDs))
	for i, id := range inputIDs {
		args[i] = id
		facts[id] = &InputFacts{}
	}
	ph := placeholders(len(inputIDs))
	rows, err := q.q.QueryContext(ctx, `SELECT c.input_id, COUNT(*), SUM(e.status = 'pending')
		FROM event_causes c JOIN events e ON e.id = c.event_id WHERE c.input_id IN (`+ph+`) GROUP BY c.input_id`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var n, open int
		if err := rows.Scan(&id, &n, &open); err != nil {
			rows.Close()
			return nil, err
		}
		facts[id].Events, facts[id].Open = n, open
	}
	rows.Close()
	rows, err = q.q.QueryContext(ctx, `SELECT c.input_id, COUNT(DISTINCT ru.id)
		FROM event_causes c JOIN reservations r ON r.event_id = c.event_id JOIN runs ru ON ru.id = r.run_id
		WHERE c.input_id IN (`+ph+`) AND ru.closed_at IS NULL
		  AND ru.status IN ('paused:approval', 'paused:reconciliation', 'failed:logic', 'failed:internal')
		GROUP BY c.input_id`, args...)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var id int64
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return nil, err
		}
		facts[id].Waiting = n
	}
	rows.Close()
	rows, err = q.q.QueryContext(ctx, `SELECT DISTINCT c.input_id, `+prefixed("m", mutationCols)+`
		FROM event_causes c JOIN reservations r ON r.event_id = c.event_id JOIN runs ru ON ru.id = r.run_id
		JOIN mutations m ON m.id = ru.mutation_id
		WHERE c.input_id IN (`+ph+`) ORDER BY m.id`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		m, err := scanMutationWith(rows, &id)
		if err != nil {
			return nil, err
		}
		facts[id].Outputs = append(facts[id].Outputs, m)
	}
	return facts, rows.Err()
}
